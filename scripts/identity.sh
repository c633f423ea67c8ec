#!/usr/bin/env bash
# Writes what strata prints and writes for a fixed set of commands into DIR,
# one file per command (stdout, stderr, exit code, then every file the
# command wrote), so that a refactoring can be shown to change no output:
#
#   bash scripts/identity.sh build/strata /tmp/before [quick|full]
#   ... change, rebuild ...
#   bash scripts/identity.sh build/strata /tmp/after  [quick|full]
#   diff -r /tmp/before /tmp/after && echo byte-identical
#
# quick (default, about 2 minutes on 2 cores): every example trace on every
# shipped chip config, the validation files whose rows run in seconds, every
# verb on small inputs.  full adds the training-step validation files
# (megatron, DGXC, MaxText: several minutes).  Paths inside outputs are
# relative to the source root, and gnuplot is not run (STRATA_GNUPLOT=none:
# its PNGs embed nothing of ours but are not byte-stable across versions).
set -uo pipefail
bin=$(realpath "${1:?usage: identity.sh STRATA_BINARY DIR [quick|full]}")
out=${2:?usage: identity.sh STRATA_BINARY DIR [quick|full]}
mode=${3:-quick}
mkdir -p "$out"
out=$(realpath "$out")
cd "$(dirname "$0")/.."
export STRATA_GNUPLOT=none LC_ALL=C
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# case NAME CMD...: runs CMD in a scratch folder W (relative paths in the
# command may name W/...), records its output and the files it wrote
case_() {
  local name=$1; shift
  rm -rf "$T/W"; mkdir -p "$T/W"
  local rc=0
  "$@" >"$T/stdout" 2>"$T/stderr" || rc=$?
  {
    echo "## rc $rc"
    echo "## stdout"; sed "s#$T#T#g" "$T/stdout"
    echo "## stderr"; sed "s#$T#T#g" "$T/stderr"
    (cd "$T/W" && find . -type f | LC_ALL=C sort | while read -r f; do
      echo "## file $f"
      case "$f" in
        *.png|*.gz) cksum <"$f" ;;
        *) sed "s#$T#T#g" "$f" ;;
      esac
    done)
  } >"$out/$name.txt"
}
W=$T/W

# 1. every example trace on every chip config
for cfg in configs/*.yaml; do
  c=$(basename "$cfg" .yaml)
  for tr in traces/examples/*.json; do
    t=$(basename "$tr" .json)
    case_ "run.$c.$t" "$bin" run --hw "$cfg" --trace "$tr" --json "$W/r.json" --csv "$W/r.csv" --top 5
  done
done

# 2. validation files (each row's prediction; --json has them all)
for f in traces/validation/*.csv; do
  n=$(basename "$f" .csv)
  case "$n" in
    megatron-a100|megatron-moe|dgxc-h100|maxtext-tpu-v4) [ "$mode" = full ] || continue ;;
  esac
  case_ "validate.$n" "$bin" validate --data "$f" --json "$W/v.json"
done
case_ validate.loco "$bin" validate --data traces/validation/new-chips.csv --leave-one-chip-out --fit efficiency.dram

# 3. generated traces and their runs
gen() { "$bin" gen llm "$@"; }
case_ gen.decode gen --model traces/models/llama-2-7b.json --phase decode --context 2048 -o "$W/t.json"
case_ gen.prefill gen --model traces/models/llama-3-8b.json --phase prefill --prompt 512 --batch 2 -o "$W/t.json"
case_ gen.tp8 gen --model traces/models/llama-3-8b.json --phase decode --context 4096 --tp 8 -o "$W/t.json"
case_ gen.train gen --model traces/models/llama-3-8b.json --phase train --batch 4 --prompt 1024 --tp 2 --sp --pp 2 --microbatches 4 --dp 2 --zero 1 -o "$W/t.json"
case_ gen.moe gen --model traces/models/mixtral-8x7b.json --phase decode --context 1024 --batch 8 --tp 2 --ep 2 -o "$W/t.json"
case_ gen.quant gen --model traces/models/llama-2-7b.json --phase decode --context 1024 --weights q4_k_m --kv-dtype fp8 --framework llama.cpp -o "$W/t.json"
case_ gen.cp gen --model traces/models/llama-3-8b.json --phase train --batch 1 --prompt 8192 --cp 2 --tp 2 -o "$W/t.json"
"$bin" gen llm --model traces/models/llama-3-8b.json --phase decode --context 4096 --tp 8 -o "$T/tp8.json" >/dev/null 2>&1
"$bin" gen llm --model traces/models/llama-3-8b.json --phase train --batch 4 --prompt 1024 --tp 2 --sp --pp 2 --microbatches 4 --dp 2 --zero 1 -o "$T/train.json" >/dev/null 2>&1
"$bin" gen llm --model traces/models/llama-2-7b.json --phase decode --context 2048 -o "$T/dec.json" >/dev/null 2>&1
case_ run.dgx.tp8 "$bin" run --hw configs/systems/nvidia-dgx-a100.yaml --trace "$T/tp8.json" --json "$W/r.json" --csv "$W/r.csv"
case_ run.dgx.tp8.set "$bin" run --hw configs/systems/nvidia-dgx-a100.yaml --trace "$T/tp8.json" --set nvlink.bandwidth=100GB/s --json "$W/r.json"
case_ run.hgx.train "$bin" run --hw configs/systems/nvidia-hgx-h100.yaml --trace "$T/train.json" --json "$W/r.json"
case_ run.p2p "$bin" run --hw configs/systems/nvidia-dgx-a100.yaml --trace traces/systems/p2p-matrix-8gpu.json --json "$W/r.json"
case_ run.tpu.pod "$bin" run --hw configs/systems/google-tpu-v4-128.yaml --trace "$T/train.json" --json "$W/r.json"
case_ run.mi300x "$bin" run --hw configs/systems/amd-mi300x-8.yaml --trace "$T/tp8.json" --json "$W/r.json"
case_ run.out "$bin" run --hw configs/nvidia-h100-sxm.yaml --trace "$T/dec.json" --out "$W/o" --timeline-granularity-us 50
case_ run.set "$bin" run --hw configs/nvidia-h100-sxm.yaml --trace "$T/dec.json" --set dram.bandwidth=8TB/s --set l2.capacity=100MiB --json "$W/r.json"
case_ run.sustained "$bin" run --hw configs/nvidia-a100-sxm-80gb.yaml --trace "$T/dec.json" --sustained --json "$W/r.json"

# 4. the other verbs
case_ info.h100 "$bin" info --hw configs/nvidia-h100-sxm.yaml --json "$W/i.json"
case_ info.dgx "$bin" info --hw configs/systems/nvidia-dgx-a100.yaml --json "$W/i.json"
case_ info.tpu "$bin" info --hw configs/google-tpu-v5e.yaml
case_ fit.70b "$bin" fit --hw configs/nvidia-rtx-4090.yaml --model traces/models/llama-2-70b.json --phase decode --json "$W/f.json"
case_ fit.train "$bin" fit --hw configs/nvidia-h100-sxm.yaml --model traces/models/llama-3-8b.json --phase train --batch 4 --prompt 4096 --tp 2 --dp 4 --zero 2 --json "$W/f.json"
case_ sweep "$bin" sweep --hw configs/nvidia-h100-sxm.yaml --trace "$T/dec.json" --vary dram.bandwidth=2TB/s..8TB/s:x2 --vary l2.capacity=25MiB,100MiB -j2 --out "$W/s"
case_ sweep.zip "$bin" sweep --hw configs/nvidia-a100-sxm-80gb.yaml --trace traces/examples/two-streams.json --vary dram.bandwidth=1TB/s,2TB/s --vary clock=1GHz,1.4GHz --zip --out "$W/s"
case_ bench.ar "$bin" bench collective --hw configs/systems/nvidia-dgx-a100.yaml --op all_reduce --min 32K --max 1G
case_ bench.ag "$bin" bench collective --hw configs/systems/two-dgx-a100-hdr.yaml --op all_gather --min 1M --max 64M --algo ring
case_ scalesim "$bin" scalesim -c traces/scalesim/google-tpu-v1.cfg -t traces/scalesim/gpt2.csv -i gemm -p "$W/p"
case_ newchip "$bin" new-chip --spec configs/specs/nvidia-b200.yaml -o "$W/b200.yaml"
case_ calibrate "$bin" calibrate --hw configs/nvidia-a100-sxm-80gb.yaml --data traces/validation/calibration.csv --fit efficiency.dram,efficiency.dram_rw --rows 'UBENCH-00*' -o "$W/fit.yaml"
case_ import.pytorch "$bin" import pytorch traces/validation/h200/decode-llama3-8b-b1-ctx2048.json.gz -o "$W/t.json"
"$bin" import pytorch traces/validation/h200/prefill-llama3-8b-b1-s2048.json.gz -o "$T/pre.json" >/dev/null 2>&1
case_ compare "$bin" compare --trace "$T/pre.json" --hw configs/nvidia-h200-sxm.yaml --json "$W/c.json"
case_ import.chakra "$bin" import chakra traces/chakra/tiny-step.json -o "$W/t.json"
"$bin" import chakra traces/chakra/tiny-step.json -o "$T/ch.json" >/dev/null 2>&1
case_ run.chakra "$bin" run --hw configs/systems/nvidia-dgx-a100.yaml --trace "$T/ch.json" --json "$W/r.json"
"$bin" run --hw configs/nvidia-a100-sxm-80gb.yaml --trace traces/examples/two-streams.json --json "$T/rep.json" --quiet >/dev/null 2>&1
case_ plot "$bin" plot --report "$T/rep.json" --out "$W/p"
case_ help "$bin" --help
case_ bad.cfg "$bin" run --hw tests/data/tiny-gpt.json --trace traces/examples/two-streams.json
case_ bad.set "$bin" run --hw configs/nvidia-h100-sxm.yaml --trace "$T/dec.json" --set dram.bandwith=1TB/s
echo "$(ls "$out" | wc -l) outputs in $out"
