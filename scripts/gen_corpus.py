#!/usr/bin/env python3
"""Generates a source-like corpus for benchmarks, with a known number of planted secrets.

    scripts/gen_corpus.py OUT_DIR --mb 1000 [--files 20000] [--secrets 200] [--seed 7]

The tree has many directories of source, config and lock files whose lines look like real
code: identifiers, string literals, comments, base64 blobs, UUIDs, hashes, integrity strings,
and the words that secret scanners key on (token, password, key, secret, auth) in harmless
uses, so that a keyword prefilter fires at a realistic rate. `--secrets` real-format
(random, fake) credentials are planted on their own lines; their count is written to
OUT_DIR/.expected-secrets (a dotfile, so it is scanned too but holds no secret).

Nothing here is committed: benches generate the corpus each time (or reuse OUT_DIR).
"""
import argparse
import os
import random
import string

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"

WORDS = (
    "config value result handler request response client server buffer index count "
    "parse render update create delete fetch store cache session user account token "
    "password secret key auth header payload option setting path file name data item "
    "list map entry node tree graph edge state event error message logger context"
).split()


def rnd(rng, alphabet, n):
    return "".join(rng.choice(alphabet) for _ in range(n))


def ident(rng):
    a, b = rng.choice(WORDS), rng.choice(WORDS)
    return a + b.capitalize() if rng.random() < 0.5 else f"{a}_{b}"


def uuid(rng):
    h = rnd(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def code_line(rng):
    k = rng.randrange(14)
    if k == 0:
        return f"    let {ident(rng)} = {ident(rng)}(&{ident(rng)}, {rng.randrange(1000)});"
    if k == 1:
        return f"    // {' '.join(rng.choice(WORDS) for _ in range(rng.randrange(4, 12)))}"
    if k == 2:
        return f'    {ident(rng)} = "{" ".join(rng.choice(WORDS) for _ in range(3))}"'
    if k == 3:
        return f"    if {ident(rng)}.{ident(rng)}() > {rng.randrange(100)} {{ return Err({ident(rng)}); }}"
    if k == 4:
        return f'    "{ident(rng)}": "{uuid(rng)}",'
    if k == 5:
        return f"    commit = \"{rnd(rng, HEX, 40)}\"  # git sha"
    if k == 6:
        return f"    checksum: sha256:{rnd(rng, HEX, 64)}"
    if k == 7:
        return f'    "integrity": "sha512-{rnd(rng, B64, 86)}==",'
    if k == 8:
        return f"    password = os.environ[\"{ident(rng).upper()}\"]"
    if k == 9:
        return f"    token: ${{{ident(rng).upper()}_TOKEN}}"
    if k == 10:
        return f"    color: #{rnd(rng, HEX, 6)};"
    if k == 11:
        return f"    def {ident(rng)}(self, {ident(rng)}, {ident(rng)}=None):"
    if k == 12:
        return f"    api_key = config.get(\"{ident(rng)}\")"
    return f"    return {ident(rng)}.{ident(rng)}({ident(rng)});"


def secret_line(rng, i):
    k = i % 5
    if k == 0:
        return f'GITHUB_TOKEN="ghp_{rnd(rng, ALNUM, 36)}"'
    if k == 1:
        return f"aws_access_key_id = AKIA{rnd(rng, string.ascii_uppercase + '234567', 16)}"
    if k == 2:
        return f'  "stripe": "sk_live_{rnd(rng, ALNUM, 24)}",'
    if k == 3:
        return f"SLACK_BOT_TOKEN=xoxb-{rnd(rng, string.digits, 11)}-{rnd(rng, string.digits, 12)}-{rnd(rng, ALNUM, 24)}"
    return f"export GITLAB_TOKEN=glpat-{rnd(rng, ALNUM + '_-', 20)}"


EXTS = [".rs", ".py", ".js", ".go", ".json", ".yaml", ".toml", ".lock", ".md", ".env"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=1000)
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--secrets", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rng = random.Random(a.seed)

    # A pool of pre-built lines keeps generation fast (1 GB in well under a minute) while
    # still varying the text; files draw random slices of it.
    pool = [code_line(rng) for _ in range(200_000)]
    pool_text = "\n".join(pool) + "\n"
    per_file = int(a.mb * 1024 * 1024 / a.files)
    plant_at = set(rng.sample(range(a.files), min(a.secrets, a.files)))

    for i in range(a.files):
        d = os.path.join(a.out, f"pkg{i % 97:02d}", f"mod{i % 13}")
        os.makedirs(d, exist_ok=True)
        start = rng.randrange(0, len(pool_text) - per_file - 1) if len(pool_text) > per_file + 1 else 0
        body = pool_text[start : start + per_file]
        while len(body) < per_file:
            body += pool_text[: per_file - len(body)]
        cut = body.find("\n")
        body = body[cut + 1 :] if cut >= 0 else body
        if i in plant_at:
            mid = body.find("\n", len(body) // 2) + 1
            body = body[:mid] + secret_line(rng, i) + "\n" + body[mid:]
        with open(os.path.join(d, f"file{i}{EXTS[i % len(EXTS)]}"), "w") as f:
            f.write(body)
    with open(os.path.join(a.out, ".expected-secrets"), "w") as f:
        f.write(f"{len(plant_at)}\n")


if __name__ == "__main__":
    main()
