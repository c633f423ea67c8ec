#!/usr/bin/env bash
# What `--out` (timeline, plot data and scripts, HTML) adds to the wall time
# of a Llama-2-7B decode-step run on H100, against the same run writing its
# JSON and CSV reports.  Rounds alternate the two commands so that a busy
# machine slows both alike; the median ratio over the rounds is printed.
#
# Usage: scripts/bench_out.sh [build-dir] [work-dir] [rounds]
#   work-dir: where the output folders are written (default: a fresh
#   folder under /tmp).  Its file system matters: creating a file costs
#   tens of microseconds on ext4, a few on tmpfs (/dev/shm).
# gnuplot is not run (STRATA_GNUPLOT=none): rendering PNG and SVG takes
# about 50 ms per plot in gnuplot itself, outside strata.
# Environment: RUNS (runs per command per round, default 40); REST (seconds
# to wait, after a sync, before each round; default 0).  On ext4 without a
# journal (this project's CI machines), a new file skips the inodes deleted
# in the last 5-35 s, so a benchmark that keeps deleting its own output
# folders makes each new file slower than a user's run would see; REST=35
# with RUNS=10 measures closer to that.
# Needs `perf` (linux-perf) for per-run timing; without it, each run is timed
# with date around a shell loop, which adds the shell's fork to both.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
case "$B" in /*) S=$B/strata ;; *) S=$(pwd)/$B/strata ;; esac
[ -x "$S" ] || { echo "build strata first (scripts/demo.sh)" >&2; exit 1; }
W=${2:-}
if [ -z "$W" ]; then
  W=$(mktemp -d)
  trap 'rm -rf "$W"' EXIT
fi
R=${3:-8}
N=${RUNS:-40}
REST=${REST:-0}
H=$(pwd)/configs/nvidia-h100-sxm.yaml
mkdir -p "$W"
cd "$W"
"$S" gen llm --model "$OLDPWD/traces/models/llama-2-7b.json" --phase decode --context 2048 -o decode.json >/dev/null
export STRATA_GNUPLOT=none

# perf, if it is installed and allowed to count here (containers often deny it)
use_perf=0
if command -v perf >/dev/null 2>&1 && perf stat -r 1 true >/dev/null 2>&1; then use_perf=1; fi
[ "$use_perf" = 1 ] || echo "perf unusable: timing shell loops with date (adds a fork to each run)" >&2

# mean wall ms of N runs of the command; $1 prepares each run
ms() {
  local pre=$1; shift
  if [ "$use_perf" = 1 ]; then
    perf stat -r "$N" --pre "$pre" "$@" 2>&1 >/dev/null |
      awk '/seconds time elapsed/ { printf "%.4f", $1 * 1000 }'
  else
    local t0 t1
    t0=$(date +%s%N)
    for ((i = 0; i < N; i++)); do eval "$pre"; "$@" >/dev/null; done
    t1=$(date +%s%N)
    awk -v a="$t0" -v b="$t1" -v n="$N" 'BEGIN { printf "%.4f", (b - a) / 1e6 / n }'
  fi
}

ratios=()
for ((r = 1; r <= R; r++)); do
  if [ "$REST" != 0 ]; then sync; sleep "$REST"; fi
  base=$(ms "rm -rf o; mkdir o" "$S" run --hw "$H" --trace decode.json --json o/r.json --csv o/o.csv --quiet)
  out=$(ms "rm -rf o" "$S" run --hw "$H" --trace decode.json --out o --no-whatif --quiet)
  ratio=$(awk -v a="$base" -v b="$out" 'BEGIN { printf "%+.1f", (b / a - 1) * 100 }')
  echo "round $r: --json --csv $base ms, --out --no-whatif $out ms: $ratio%"
  ratios+=("$ratio")
done
printf '%s\n' "${ratios[@]}" | sort -g | awk '{ v[NR] = $1 } END {
  m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
  printf "--out adds: median %+.1f%% (min %+.1f%%, max %+.1f%%) over %d rounds\n", m, v[1], v[NR], NR }'
