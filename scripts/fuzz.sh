#!/usr/bin/env bash
# Fuzz every loader with libFuzzer under ASan+UBSan (docs/fuzzing.md).
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 20; CI runs 10)
# Seeds are the shipped files of each kind; findings land in build-fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
command -v clang >/dev/null || { echo "fuzz: clang is not installed (apt-get install clang); skipped" >&2; exit 0; }
CC=clang cmake -S . -B build-fuzz -DSTRATA_FUZZ=ON -DSTRATA_SANITIZE=ON -DSTRATA_WERROR=OFF \
  -DSTRATA_IPO=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
targets=(cfg trace model csv scalesim pytorch chakra report spec overlay)
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]/#/fuzz_}" >build-fuzz/build.log 2>&1 || { tail -20 build-fuzz/build.log >&2; exit 1; }
seeds=build-fuzz/seeds
rm -rf "$seeds" && mkdir -p build-fuzz/crashes
for t in "${targets[@]}"; do mkdir -p "$seeds/$t"; done
cp configs/*.yaml configs/systems/*.yaml "$seeds/cfg/"
cp traces/examples/*.json "$seeds/trace/"
# named collective groups (the top-level "groups"), beside a listed one
printf '%s\n' '{"strata_trace": 1, "devices": ["a", "b", "c"], "groups": {"all": ["a", "b", "c"]},' \
  ' "ops": [{"id": "x", "kind": "collective", "device": "a", "collective": "all_reduce", "group": "all", "bytes": 64},' \
  '  {"id": "y", "kind": "collective", "device": "b", "collective": "all_reduce", "group": ["a", "b", "c"], "bytes": 64},' \
  '  {"id": "z", "kind": "collective", "device": "c", "collective": "all_reduce", "group": "all", "bytes": 64}]}' \
  >"$seeds/trace/named-groups.json"
cp traces/models/*.json "$seeds/model/"
# not maxtext-tpu-v4.csv: its TPU pod rows take seconds an input in this
# Debug+ASan build (set-up of 64- and 192-chip systems), which starved the
# csv target (16-80 inputs in 10 s instead of hundreds); the other files
# have the same columns
for f in traces/validation/*.csv; do
  case $f in *maxtext*) continue ;; esac
  head -4 "$f" >"$seeds/csv/$(basename "$f")"
done
for c in traces/scalesim/*.cfg; do
  for tp in traces/scalesim/*.csv; do
    { cat "$c"; echo '%%'; head -3 "$tp"; } >"$seeds/scalesim/$(basename "$c" .cfg)-$(basename "$tp" .csv)"
  done
done
if [ -d ../shared/traces/pytorch ]; then
  for f in ../shared/traces/pytorch/*.json.gz; do
    s=$(gzip -dc "$f" | wc -c)
    [ "$s" -lt 400000 ] && gzip -dc "$f" >"$seeds/pytorch/$(basename "$f" .gz)"
  done
fi
cp traces/chakra/*.json "$seeds/chakra/"
cp tests/data/report-small.json "$seeds/report/"
cp configs/specs/*.yaml "$seeds/spec/"
printf 'base: nvidia-h100-sxm\nset:\n  dram.bandwidth: 4.8TB/s\n  l2.capacity: 100MiB\n' >"$seeds/overlay/a.yaml"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# the targets run side by side, one a core (each fuzzer is one process on
# one core): ten targets of 10 s took 100 s of a CI run one after another
jobs=$(nproc)
fuzz_one() {
  local t=$1
  local rc=0
  mkdir -p "build-fuzz/corpus/$t"
  ./build-fuzz/fuzz_$t -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix=build-fuzz/crashes/$t- "build-fuzz/corpus/$t" "$seeds/$t" >"build-fuzz/fuzz-$t.log" 2>&1 || rc=$?
  echo "$rc" >"build-fuzz/fuzz-$t.rc"
}
rm -f build-fuzz/fuzz-*.rc
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  fuzz_one "$t" &
done
wait
fail=0
for t in "${targets[@]}"; do
  log=build-fuzz/fuzz-$t.log
  if [ "$(cat "build-fuzz/fuzz-$t.rc")" = 0 ]; then
    runs=$(grep -o 'Done [0-9]* runs' "$log" | grep -o '[0-9]*' || echo '?')
    echo "fuzz $t: $runs runs in $secs s, nothing found"
  else
    echo "fuzz $t: FOUND A PROBLEM (build-fuzz/crashes/$t-*, log $log):" >&2
    grep -m5 -E 'ERROR|SUMMARY|runtime error' "$log" >&2 || tail -5 "$log" >&2
    fail=1
  fi
done
exit $fail
