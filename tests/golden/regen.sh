#!/bin/sh
# regen.sh: rewrite the golden files after a deliberate model change.
#
# Builds test_golden_small and runs it with STRATA_GOLDEN_REGEN=1: it runs
# its fixed trace (defined in tests/test_golden_small.c, the one source of
# truth) on configs/nvidia-a100-sxm-80gb.yaml and rewrites
# tests/golden/small-a100.json from the result, then compares against the
# new file.  Review `git diff tests/golden` and commit it together with the
# model change that moved the numbers.
#
#   tests/golden/regen.sh            # build directory ./build
#   BUILD_DIR=out tests/golden/regen.sh
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-"$root/build"}
cmake -S "$root" -B "$build" >/dev/null
cmake --build "$build" --target test_golden_small
cd "$root"
STRATA_GOLDEN_REGEN=1 "$build/test_golden_small"
git -C "$root" --no-pager diff --stat -- tests/golden 2>/dev/null || true
