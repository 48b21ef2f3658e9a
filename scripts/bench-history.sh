#!/usr/bin/env bash
# History-scan benchmark: `scanner scan --history` against the floors set by git itself.
#
# Two repositories, made in a temporary directory that is removed on exit (see KEEP):
#   ripgrep    the real ripgrep history, every ref (/work/shared/bench/ripgrep.bundle,
#              see /work/shared/bench/README.md; override with RIPGREP_BUNDLE)
#   synthetic  COMMITS (default 20000) commits made by `git fast-import`, 200 files of ~2 KB
#              edited in place (3 per commit) on main plus a side branch and a tag, with
#              planted secrets: one added then deleted on main, one only on the side branch,
#              one only in a tag.
#
# Commands timed by hyperfine on each:
#   cat-file   git cat-file --batch-all-objects --batch --unordered: inflating every object
#              once, single-threaded; the floor for reading the content.
#   log -p     git log -p --all: what a naive history scanner reads (every diff, text).
#   scanner    $SCANNER $SCANNER_ARGS REPO (default args: `scan --history`); skipped only
#              when SCANNER is unset.
#
# With MODULE_BENCH=1 it also runs the history module's ignored `bench` test in release mode
# on each repository: enumerate() alone, then reading every blob through 1 and 2
# `git cat-file --batch` processes, through 1 and 2 gitoxide readers at several pack cache
# sizes, and through 1 and 2 of our own pack readers (what the workers use) at several
# cache sizes, and the blobs' sizes alone (gitoxide's headers, and the probe the walk
# uses), each with its wall and CPU time (git children included).
#
# Usage: SCANNER=target/release/scanner scripts/bench-history.sh
# Needs git and hyperfine (`apt-get install -y hyperfine`).
set -euo pipefail

RIPGREP_BUNDLE=${RIPGREP_BUNDLE:-$(cd "$(dirname "$0")/.." && pwd)/../shared/bench/ripgrep.bundle}
[ -f "$RIPGREP_BUNDLE" ] || { echo "no ripgrep bundle at $RIPGREP_BUNDLE: set RIPGREP_BUNDLE" >&2; exit 2; }
COMMITS=${COMMITS:-20000}
SCANNER=${SCANNER:-}
SCANNER_ARGS=${SCANNER_ARGS:-scan --history}
RUNS=${RUNS:-5}

command -v hyperfine >/dev/null || { echo "hyperfine not found: apt-get install -y hyperfine" >&2; exit 2; }

# KEEP=DIR builds the repositories in DIR (which must not exist) and leaves them there.
if [ -n "${KEEP:-}" ]; then
    mkdir "$KEEP"
    work=$(cd "$KEEP" && pwd)
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi

# No user or system configuration: the numbers must not depend on the machine's gitconfig.
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1

echo "== preparing ripgrep (mirror clone of $RIPGREP_BUNDLE)" >&2
git clone -q --mirror "$RIPGREP_BUNDLE" "$work/ripgrep" 2>/dev/null

# The fast-import stream. Each file is 40 numbered lines; an edit rewrites one line, so every
# version is a new blob that deltas well against the previous one, as in real histories.
fast_import_stream() {
    LC_ALL=C awk -v commits="$COMMITS" '
    function content(f, v,    s, i) {
        s = ""
        for (i = 0; i < 40; i++) {
            if (i == v % 40) s = s sprintf("line %02d of file %03d, version %d\n", i, f, v)
            else s = s sprintf("line %02d of file %03d, unchanged text here\n", i, f)
        }
        return s
    }
    function blob(path, data) {
        printf "M 100644 inline %s\ndata %d\n%s\n", path, length(data), data
    }
    function header(ref, n, msg) {
        printf "commit %s\nmark :%d\n", ref, n
        printf "author Bench <bench@example.com> %d +0000\n", 1600000000 + n * 60
        printf "committer Bench <bench@example.com> %d +0000\n", 1600000000 + n * 60
        printf "data %d\n%s\n", length(msg), msg
    }
    BEGIN {
        nfiles = 200
        for (n = 1; n <= commits; n++) {
            header("refs/heads/main", n, "edit " n)
            if (n > 1) printf "from :%d\n", n - 1
            if (n == 1) {
                for (f = 0; f < nfiles; f++) { ver[f] = 0; blob(sprintf("src/f%03d.txt", f), content(f, 0)) }
            } else {
                for (k = 0; k < 3; k++) {
                    f = (n * 7 + k * 61) % nfiles
                    ver[f]++
                    blob(sprintf("src/f%03d.txt", f), content(f, ver[f]))
                }
            }
            if (n == int(commits / 4))
                blob("config/deploy.env", "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")
            if (n == int(commits / 4) + 1)
                printf "D config/deploy.env\n"
            printf "\n"
        }
        # A side branch, never merged, and a tag on a commit no branch reaches.
        side = commits + 1
        header("refs/heads/side", side, "side work")
        printf "from :%d\n", int(commits / 2)
        blob("notes/token.txt", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123\n")
        printf "\n"
        header("refs/tags/only-tag", side + 1, "tagged")
        printf "from :%d\n", int(commits / 3)
        blob("ci/slack.txt", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX\n")
        printf "\n"
    }'
}

echo "== generating synthetic history ($COMMITS commits)" >&2
git init -q --bare "$work/synthetic"
fast_import_stream | git -C "$work/synthetic" fast-import --quiet
# fast-import writes loose-delta packs; repack once so both repositories are in the shape
# a clone has.
git -C "$work/synthetic" repack -adq

for repo in ripgrep synthetic; do
    dir="$work/$repo"
    objects=$(git -C "$dir" count-objects -v | awk '/in-pack|size-pack/ {printf "%s %s ", $1, $2}')
    echo "== $repo: $(git -C "$dir" rev-list --all | wc -l) commits, $objects" >&2
    cmds=(
        -n "cat-file" "git -C $dir cat-file --batch-all-objects --batch --unordered >/dev/null"
        -n "log -p" "git -C $dir log -p --all >/dev/null"
    )
    if [ -n "$SCANNER" ]; then
        cmds+=(-n "scanner" "$SCANNER $SCANNER_ARGS $dir >/dev/null || [ \$? -eq 1 ]")
    else
        echo "   (SCANNER unset: scanner slot skipped)" >&2
    fi
    hyperfine --warmup 1 --runs "$RUNS" --style basic "${cmds[@]}"
    if [ "${MODULE_BENCH:-0}" = 1 ]; then
        HISTORY_BENCH_REPO="$dir" cargo test --release -q -p scanner-cli --lib \
            history::tests::bench -- --ignored --nocapture 2>&1 | grep -E '^(enumerate|read all)'
    fi
done
