#!/usr/bin/env bash
# Precision on real trees nobody planted secrets in: scans them with the
# release binary and prints the findings grouped by rule and confidence, each
# with its path, line and secret, so that a person can classify them
# (credential or not). Then the engine-level view of the generic rules
# (crates/scanner-engine/examples/findings.rs), which shows confidence and
# tags and the suppressions by reason whatever the CLI prints.
#
# Usage: scripts/precision.sh [DIR...]
# Default trees: ~/.cargo/registry/src, the Python installation, and the
# global node_modules when they exist.
set -euo pipefail
cd "$(dirname "$0")/.."

trees=("$@")
if [ ${#trees[@]} -eq 0 ]; then
    for t in "$HOME/.cargo/registry/src" \
             "$(python3 -c 'import sys; print(sys.prefix)' 2>/dev/null || true)" \
             "$(npm root -g 2>/dev/null || true)"; do
        [ -n "$t" ] && [ -d "$t" ] && trees+=("$t")
    done
fi
[ ${#trees[@]} -gt 0 ] || { echo "no tree to scan" >&2; exit 2; }

cargo build --release -q -p scanner
cargo build --release -q -p scanner-engine --example findings
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for t in "${trees[@]}"; do
    echo "### $t"
    # Exit status 1 means findings: not an error here.
    target/release/scanner scan --no-ignore --format json "$t" >"$out/f.json" 2>"$out/err" || [ $? -eq 1 ]
    tail -n 3 "$out/err"
    python3 - "$out/f.json" <<'PY'
import collections, json, sys
findings = json.load(open(sys.argv[1]))
groups = collections.defaultdict(list)
for f in findings:
    groups[(f["rule_id"], f.get("confidence", "?"))].append(f)
for (rule, conf), fs in sorted(groups.items()):
    print(f"== {rule} [{conf}]: {len(fs)}")
    for f in fs:
        tags = ",".join(f.get("tags", []))
        print(f"  {f['path']}:{f['line']}  {f['secret']!r}  {tags}")
print(f"total: {len(findings)}")
PY
done

echo "### engine view (generic rules, confidence, tags, suppressed by reason)"
target/release/examples/findings "${trees[@]}"
