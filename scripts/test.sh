#!/usr/bin/env bash
# One command: install what is missing, build (plain and ASan+UBSan), run all tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh --test
jobs=$(nproc)
# strata-mpi (the MPI sweep driver) is built and tested where an MPI is installed
mpi=OFF
command -v mpicc >/dev/null && command -v mpirun >/dev/null && mpi=ON
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSTRATA_MPI=$mpi >/dev/null
cmake --build build -j"$jobs" >/dev/null
ctest --test-dir build --output-on-failure -j"$jobs"
cmake -S . -B build-san -DSTRATA_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-san -j"$jobs" >/dev/null
# test_validation_maxtext (two TPU training steps of ~50M engine events
# each) and test_validation_training* (70B and 175B steps of ~200-380M) take minutes under
# ASan and run no code the other suites do not: the plain build runs them
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-san --output-on-failure -j"$jobs" -E '^test_validation_(maxtext|training.*)$'
# every loader fuzzed for a bounded time under ASan+UBSan (scripts/fuzz.sh; skipped without clang)
bash scripts/fuzz.sh "${STRATA_FUZZ_SECONDS:-10}"
