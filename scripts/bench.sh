#!/usr/bin/env bash
# End-to-end benchmark of `scanner scan`, every figure measured in the same run as its baseline.
#
#   scripts/bench.sh [TREE]
#
# Without TREE, generates a corpus under bench-corpus/ (gitignored; reused when present):
# BENCH_MB (default 1000) MB in BENCH_FILES (default 20000) files with planted secrets, plus a
# tree with a tenth of the files for the memory-growth check. With TREE, measures that tree.
#
# Measures, with hyperfine (median of BENCH_RUNS runs, default 5):
#   - scanner scan --format json      (all cores)
#   - rg -c -i -F -f KEYWORDS         (the rules' keywords: the floor of any keyword-prefiltered scanner)
#   - scanner scan --threads 1        (the 1 -> N thread speedup)
#   - scanner scan EMPTY_DIR          (start-up cost: rule load + compile + walk of nothing)
# and peak RSS (/usr/bin/time -v) on the small and the large tree.
#
# Needs: hyperfine, rg, /usr/bin/time (apt-get install hyperfine ripgrep time), python3.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${BENCH_RUNS:-5}
mb=${BENCH_MB:-1000}
files=${BENCH_FILES:-20000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for tool in hyperfine rg python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "bench.sh: $tool is missing (apt-get install hyperfine ripgrep time)" >&2; exit 2; }
done

cargo build --release -q -p scanner
bin=$PWD/target/release/scanner

if [ $# -ge 1 ]; then
    tree=$1
    small=""
else
    tree=bench-corpus/large
    small=bench-corpus/small
    if [ ! -f "$tree/.expected-secrets" ]; then
        echo "generating $mb MB in $files files under $tree ..." >&2
        rm -rf "$tree"
        python3 scripts/gen_corpus.py "$tree" --mb "$mb" --files "$files" --secrets 200
    fi
    if [ ! -f "$small/.expected-secrets" ]; then
        rm -rf "$small"
        python3 scripts/gen_corpus.py "$small" --mb "$(python3 -c "print($mb/10)")" \
            --files "$((files / 10))" --secrets 20
    fi
fi

# The keywords of every built-in rule, one per line, for rg's fixed-string prefilter.
python3 - > "$work/keywords" <<'EOF'
import glob, tomllib
kw = set()
for f in glob.glob("crates/scanner-engine/rules/*.toml"):
    with open(f, "rb") as h:
        for r in tomllib.load(h).get("rules", []):
            kw.update(k.lower() for k in r.get("keywords", []))
print("\n".join(sorted(kw)))
EOF
mkdir -p "$work/empty"
bytes=$(du -sb "$tree" | cut -f1)
echo "tree: $tree, $((bytes / 1024 / 1024)) MiB, $(find "$tree" -type f | wc -l) files, $(wc -l < "$work/keywords") keywords" >&2

# Correctness first: every planted secret is found.
if [ -f "$tree/.expected-secrets" ]; then
    expected=$(cat "$tree/.expected-secrets")
    found=$("$bin" scan --quiet --format jsonl "$tree" | wc -l || true)
    echo "planted secrets: $expected, findings: $found" >&2
fi

hyperfine --style basic --warmup 1 --runs "$runs" -i --export-json "$work/h.json" \
    -n scanner "$bin scan --quiet --format json $tree > /dev/null" \
    -n rg "rg --hidden -c -i -F -f $work/keywords $tree > /dev/null" \
    -n scanner-1-thread "$bin scan --quiet --threads 1 --format json $tree > /dev/null" \
    -n empty-dir "$bin scan --quiet $work/empty" >&2

# (scanner exits 1 when it finds something: not a failure here.)
rss() { { /usr/bin/time -v "$bin" scan --quiet --format json "$1" 2>&1 >/dev/null || true; } | awk '/Maximum resident/ {print $6}'; }
rss_large=$(rss "$tree")
rss_small=""
[ -n "$small" ] && rss_small=$(rss "$small")

python3 - "$work/h.json" "$bytes" "$rss_large" "$rss_small" "$(nproc)" <<'EOF'
import json, sys
h = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
size = int(sys.argv[2])
med = {k: v["median"] for k, v in h.items()}
mbs = lambda t: size / t / 1e6
print(f"| measure | value |")
print(f"|---|---|")
print(f"| tree size | {size / 1e6:.0f} MB |")
print(f"| scanner ({sys.argv[5]} threads), median | {med['scanner']:.3f} s, {mbs(med['scanner']):.0f} MB/s |")
print(f"| rg -c -i -F -f keywords, median | {med['rg']:.3f} s, {mbs(med['rg']):.0f} MB/s |")
print(f"| scanner / rg throughput | {med['rg'] / med['scanner']:.2f} |")
print(f"| scanner 1 thread, median | {med['scanner-1-thread']:.3f} s, {mbs(med['scanner-1-thread']):.0f} MB/s |")
print(f"| speedup 1 -> {sys.argv[5]} threads | {med['scanner-1-thread'] / med['scanner']:.2f} |")
print(f"| empty directory, median | {med['empty-dir'] * 1000:.1f} ms |")
print(f"| peak RSS, full tree | {int(sys.argv[3]) / 1024:.1f} MiB |")
if sys.argv[4]:
    print(f"| peak RSS, tree with 1/10 of the files | {int(sys.argv[4]) / 1024:.1f} MiB |")
    print(f"| RSS growth for 10x the files | {int(sys.argv[3]) / int(sys.argv[4]):.2f}x |")
EOF
