#!/usr/bin/env bash
# Pre-commit latency: `scanner scan --staged` on a one-file change in a repository of
# BENCH_FILES (default 10000) small committed files, in the same hyperfine run as two floors:
# `git diff --cached --name-only` (listing what is staged at all) and `scanner scan EMPTY_DIR`
# (the scanner's start-up: rule loading, engine build, thread pool).
#
#   scripts/bench-staged.sh            # builds target/release/scanner first
#   SCANNER=/path/to/scanner scripts/bench-staged.sh
#
# Target: the staged scan under 50 ms wall. Needs hyperfine and git.
set -euo pipefail
cd "$(dirname "$0")/.."

files=${BENCH_FILES:-10000}
for tool in hyperfine git; do
    command -v "$tool" >/dev/null || { echo "bench-staged.sh: $tool is missing" >&2; exit 2; }
done
if [ -z "${SCANNER:-}" ]; then
    cargo build --release -p scanner >&2
    SCANNER=$PWD/target/release/scanner
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo=$work/repo
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
git -c init.defaultBranch=main init -q "$repo"

# $files source-like files of ~1 KiB in 100 directories.
line='fn handler(req: &Request) -> Response { let id = req.param("id"); lookup(id).into() }'
body=$(for i in $(seq 1 12); do printf '%s // %d\n' "$line" "$i"; done)
per_dir=$(( (files + 99) / 100 ))
n=0
for d in $(seq -w 0 99); do
    mkdir -p "$repo/src/m$d"
    for f in $(seq 1 "$per_dir"); do
        [ "$n" -ge "$files" ] && break
        printf '// file %d\n%s\n' "$n" "$body" > "$repo/src/m$d/f$f.rs"
        n=$((n + 1))
    done
done
git -C "$repo" add -A
git -C "$repo" commit -q -m corpus
# One staged change (clean, so the scan exits 0).
printf '// a new line\n' >> "$repo/src/m50/f1.rs"
git -C "$repo" add src/m50/f1.rs
mkdir "$work/empty"

echo "repository: $n files, one staged change; scanner: $SCANNER" >&2
cd "$repo"
"$SCANNER" scan --staged >/dev/null
hyperfine --warmup 3 --shell=none \
    --command-name 'scanner scan --staged' "$SCANNER scan --staged --quiet" \
    --command-name 'git diff --cached --name-only' 'git diff --cached --name-only' \
    --command-name 'scanner scan EMPTY_DIR' "$SCANNER scan --quiet $work/empty" \
    "$@"
