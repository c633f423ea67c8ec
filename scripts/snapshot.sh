#!/usr/bin/env bash
# Writes strata's predictions for every shipped example trace on every
# shipped single-chip config, and for `strata validate`, into DIR (one JSON
# report each).  Used to check that a refactoring moved no prediction:
#   bash scripts/snapshot.sh build/strata /tmp/before
#   ... change ...
#   bash scripts/snapshot.sh build/strata /tmp/after
#   python3 scripts/snapshot_diff.py /tmp/before /tmp/after
set -euo pipefail
bin=${1:?usage: snapshot.sh STRATA_BINARY DIR}
out=${2:?usage: snapshot.sh STRATA_BINARY DIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
for cfg in configs/*.yaml; do
  c=$(basename "$cfg" .yaml)
  for tr in traces/examples/*.json; do
    t=$(basename "$tr" .json)
    "$bin" run --hw "$cfg" --trace "$tr" --json "$out/$c.$t.json" --quiet >/dev/null 2>&1 ||
      echo "fail $c $t" >>"$out/failures.txt"
  done
done
"$bin" validate --data traces/validation/calibration.csv --json "$out/validate.json" >/dev/null
