// Reads the token from the environment.
const token = process.env.GITHUB_TOKEN;
export const headers = { Authorization: "token {{TOKEN:11}}" };
