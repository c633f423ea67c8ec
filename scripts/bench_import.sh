#!/usr/bin/env bash
# Import speed and memory on a large Kineto trace: the real A100 training
# trace from ../shared, replicated N times with shifted times and ids
# (default 600 copies, about 1.07 GB of JSON).  Needs python3 and GNU time.
# Usage: scripts/bench_import.sh [copies] [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-600}
B=${2:-build}
SRC=../shared/traces/pytorch/a100-train-rank0-shapes.json.gz
[ -f "$SRC" ] || { echo "needs $SRC" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 - "$SRC" "$T/big.json" "$N" <<'PY'
import gzip, json, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
ev = json.load(gzip.open(src))["traceEvents"]
span = max(e.get("ts", 0) + e.get("dur", 0) for e in ev) - min(e["ts"] for e in ev if "ts" in e) + 1000
with open(dst, "w") as f:
    f.write('{"schemaVersion": 1, "traceEvents": [\n')
    first = True
    for rep in range(n):
        for e in ev:
            e2 = dict(e)
            if "ts" in e2:
                e2["ts"] += rep * span
            if "args" in e2:
                a = dict(e2["args"])
                for k in ("External id", "correlation"):
                    if k in a:
                        a[k] += rep * 10000000
                e2["args"] = a
            f.write(("" if first else ",\n") + json.dumps(e2))
            first = False
    f.write("\n]}\n")
PY
size=$(stat -c %s "$T/big.json")
/usr/bin/time -f "%e %M" -o "$T/time" "$B/strata" import pytorch "$T/big.json" -o "$T/out.json" >/dev/null 2>&1
read -r secs kb <"$T/time"
awk -v s="$size" -v t="$secs" -v k="$kb" 'BEGIN { printf "imported %.2f GB in %.2f s: %.0f MB/s, max RSS %.0f MB\n", s / 1e9, t, s / 1e6 / t, k / 1024 }'
