#!/usr/bin/env bash
# Precision on real trees nobody planted secrets in (docs/precision.md): scans
# each tree with the release binary, `--no-ignore`, and prints for each
#   - its size (MB on disk, and what the scanner read) and the wall time;
#   - the findings by confidence (one unfiltered run, which counts the lows);
#   - a rule x confidence table;
#   - every medium or high finding (a second run, `--min-confidence medium`,
#     as a user would triage), one per line, for a person to classify as a
#     real credential, a test or documentation credential (which must be
#     low), or not a credential.
#
# Usage: scripts/precision.sh [DIR...]
# Without arguments the trees are $CARGO_SRC (default ~/.cargo/registry/src),
# $PYTHON_PREFIX (default: python3's sys.prefix) and $NODE_MODULES (no
# default: `npm install --ignore-scripts` a few large packages in a temp dir
# and point it there). Environment:
#   SHOW_SECRETS=1  print secrets whole (default: redacted as the CLI does)
#   OUT=DIR         keep each tree's JSON reports there (default: a temp dir)
#   ENGINE_VIEW=1   also run the engine's findings example (generic rules:
#                   tags and suppressions by reason), slow on large trees
set -euo pipefail
cd "$(dirname "$0")/.."

trees=("$@")
if [ ${#trees[@]} -eq 0 ]; then
    for t in "${CARGO_SRC:-$HOME/.cargo/registry/src}" \
             "${PYTHON_PREFIX:-$(python3 -c 'import sys; print(sys.prefix)' 2>/dev/null || true)}" \
             "${NODE_MODULES:-}"; do
        [ -n "$t" ] && [ -d "$t" ] && trees+=("$t")
    done
fi
[ ${#trees[@]} -gt 0 ] || { echo "no tree to scan" >&2; exit 2; }

cargo build --release -q -p scanner
bin=target/release/scanner
if [ -n "${OUT:-}" ]; then
    out=$OUT
    mkdir -p "$out"
else
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
fi
secrets=()
[ "${SHOW_SECRETS:-0}" = 1 ] && secrets=(--show-secrets)

i=0
for t in "${trees[@]}"; do
    i=$((i + 1))
    all="$out/$i.all.json" med="$out/$i.medium.json"
    echo "### $t ($(du -sm "$t" | cut -f1) MB on disk)"
    # Exit status 1 means findings: not an error here.
    start=$(date +%s.%N)
    "$bin" scan --no-ignore --format json "${secrets[@]}" -o "$all" "$t" 2>"$out/$i.err" || [ $? -eq 1 ]
    end=$(date +%s.%N)
    "$bin" scan --no-ignore --format json --min-confidence medium "${secrets[@]}" -o "$med" "$t" \
        2>/dev/null || [ $? -eq 1 ]
    python3 -c "import sys; print(f'wall {float(sys.argv[2]) - float(sys.argv[1]):.1f} s (unfiltered run)')" "$start" "$end"
    grep -E '^(scanned|suppressed|not scanned)' "$out/$i.err" || true
    python3 - "$all" "$med" "$t" <<'PY'
import collections, json, sys
findings = json.load(open(sys.argv[1]))
medium = json.load(open(sys.argv[2]))
root = sys.argv[3].rstrip("/") + "/"
levels = ("high", "medium", "low")
by_conf = collections.Counter(f["confidence"] for f in findings)
print("findings: " + ", ".join(f"{by_conf[c]} {c}" for c in levels) + f" ({len(findings)} in all)")
table = collections.defaultdict(collections.Counter)
for f in findings:
    table[f["rule_id"]][f["confidence"]] += 1
width = max([len(r) for r in table] + [4])
print(f"  {'rule':<{width}}  {'high':>5} {'medium':>6} {'low':>5}")
for rule, c in sorted(table.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])):
    print(f"  {rule:<{width}}  {c['high']:>5} {c['medium']:>6} {c['low']:>5}")
print(f"medium and high, to classify: {len(medium)}")
for f in sorted(medium, key=lambda f: (f["rule_id"], f["path"], f["line"])):
    path = f["path"][len(root):] if f["path"].startswith(root) else f["path"]
    tags = ",".join(f.get("tags", []))
    secret = f["secret"] if len(f["secret"]) <= 64 else f["secret"][:64] + "\u2026"
    print(f"  [{f['confidence']}] {f['rule_id']}  {path}:{f['line']}  {secret!r}  {tags}")
PY
done

if [ "${ENGINE_VIEW:-0}" = 1 ]; then
    echo "### engine view (generic rules, confidence, tags, suppressed by reason)"
    cargo build --release -q -p scanner-engine --example findings
    target/release/examples/findings "${trees[@]}"
fi
