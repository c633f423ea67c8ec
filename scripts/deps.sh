#!/usr/bin/env bash
# Installs what strata needs on Debian 12 when it is missing (run as root).
# --test also installs what the tests use (Chromium for the HTML report test).
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v cc >/dev/null || need+=(gcc)
command -v make >/dev/null || need+=(make)
command -v pkg-config >/dev/null || need+=(pkg-config)
[ -f /usr/include/stdio.h ] || need+=(libc6-dev)
[ -f /usr/include/yaml.h ] || need+=(libyaml-dev)
[ -f /usr/include/cjson/cJSON.h ] || need+=(libcjson-dev)
[ -f /usr/include/gsl/gsl_sort.h ] || need+=(libgsl-dev)
[ -f /usr/include/zlib.h ] || need+=(zlib1g-dev)
command -v gnuplot >/dev/null || need+=(gnuplot-nox)
if [ "${1:-}" = --test ]; then
  command -v chromium >/dev/null || need+=(chromium)
fi
# optional: Open MPI for strata-mpi and its test (tests/test_cli_sweep.c); the
# build and the other tests go on without it
want=()
if [ "${1:-}" = --test ]; then
  command -v mpicc >/dev/null || want+=(libopenmpi-dev)
  command -v mpirun >/dev/null || want+=(openmpi-bin)
  command -v clang >/dev/null || want+=(clang)   # the fuzz targets (scripts/fuzz.sh)
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "strata: missing packages: ${need[*]} (run as root, or: sudo apt-get install ${need[*]})" >&2
    exit 1
  fi
  echo "strata: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ ${#want[@]} -gt 0 ] && [ "$(id -u)" -eq 0 ]; then
  echo "strata: installing ${want[*]} (optional: the MPI sweep driver)" >&2
  export DEBIAN_FRONTEND=noninteractive
  { [ ${#need[@]} -gt 0 ] || apt-get update -qq; } &&
    apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null ||
    echo "strata: could not install ${want[*]}; strata-mpi is not built and its test is skipped" >&2
fi
