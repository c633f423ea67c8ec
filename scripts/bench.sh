#!/usr/bin/env bash
# Simulator speed: wall time of the standard runs and engine events per second.
# Usage: scripts/bench.sh [build-dir] [--against FILE]   (a Release build;
# scripts/demo.sh makes one).  Each run's lines are kept in
# BUILD/bench-last.txt; the next run ends with each case's figure beside the
# one before (that file, or --against FILE: another run's lines, e.g. an
# older binary's run with scripts/bench.sh OLD-BUILD-DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
B=build
PREV=
while [ $# -gt 0 ]; do
  case $1 in
    --against) PREV=$2; shift 2 ;;
    *) B=$1; shift ;;
  esac
done
S=$B/strata
[ -x "$S" ] || { echo "build strata first (scripts/demo.sh)" >&2; exit 1; }
[ -n "$PREV" ] || PREV=$B/bench-last.txt
T=$(mktemp -d)
# every line also into $T/now.txt; at the end each case against the previous run
exec 3>&1 > >(tee "$T/now.txt")
TEE=$!
finish() {
  exec 1>&3
  wait "$TEE" 2>/dev/null || true
  if [ -s "$PREV" ]; then
    echo
    echo "against the previous run ($PREV): the case's wall time (or its first figure), now and before"
    awk -f scripts/bench_compare.awk "$PREV" "$T/now.txt"
  fi
  [ -s "$T/now.txt" ] && cp "$T/now.txt" "$B/bench-last.txt"
  rm -rf "$T"
}
trap finish EXIT
$S gen llm --model traces/models/llama-2-7b.json --phase decode --context 2048 -o "$T/decode.json" >/dev/null
$S gen llm --model traces/models/llama-2-7b.json --phase prefill --prompt 2048 -o "$T/prefill.json" >/dev/null
grep -E '^LLMC-0[0-3][0-9],' traces/validation/calibration.csv | sed -n '1,200p' >"$T/rows"
{ head -1 traces/validation/calibration.csv; grep -E 'gemm m=' "$T/rows"; } >"$T/gemm.csv"

# time N runs of a command; prints mean ms per run
timeit() {
  local n=$1; shift
  local t0 t1
  t0=$(date +%s%N)
  for ((i = 0; i < n; i++)); do "$@" >/dev/null; done
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { printf "%.3f", (b - a) / 1e6 / n }'
}
events() { "$@" --json "$T/r.json" --quiet >/dev/null && grep -o '"engine_events":[[:space:]]*[0-9]*' "$T/r.json" | grep -o '[0-9]*$'; }

for w in decode prefill; do
  ms=$(timeit 20 $S run --hw configs/nvidia-h100-sxm.yaml --trace "$T/$w.json" --quiet)
  ev=$(events $S run --hw configs/nvidia-h100-sxm.yaml --trace "$T/$w.json")
  awk -v w="$w" -v ms="$ms" -v ev="$ev" 'BEGIN { printf "llama-2-7b %-8s on H100: %8.2f ms wall per run (load + simulate + report), %7d events, %.2f M events/s\n", w, ms, ev, ev / (ms / 1e3) / 1e6 }'
done
for hw in google-tpu-v5e google-tpu-v6e; do
  for w in decode prefill; do
    ms=$(timeit 5 $S run --hw configs/$hw.yaml --trace "$T/$w.json" --quiet)
    ev=$(events $S run --hw configs/$hw.yaml --trace "$T/$w.json")
    awk -v hw="$hw" -v w="$w" -v ms="$ms" -v ev="$ev" 'BEGIN { printf "llama-2-7b %-8s on %s: %8.2f ms wall per run, %7d events, %.2f M events/s\n", w, hw, ms, ev, ev / (ms / 1e3) / 1e6 }'
  done
done
# the model families of docs/vision.md and docs/ssm.md: a ViT-B/16 batch
# under eager PyTorch's autocast on a 4090, LLaVA-1.5-7B's prefill with an
# image on an A100, and a Mamba-2 hybrid's decode step on a 5090
$S gen llm --model traces/models/vision/vit-base-patch16-224.json --phase prefill --batch 1024 --dtype fp16 \
   --framework pytorch -o "$T/vit.json" >/dev/null
$S gen llm --model traces/models/llava-1.5-7b.json --phase prefill --prompt 64 --images 1 --dtype fp16 \
   -o "$T/llava.json" >/dev/null
$S gen llm --model traces/models/nemotron-nano-9b-v2.json --phase decode --context 1024 --framework vllm \
   -o "$T/hybrid.json" >/dev/null
for c in "vit nvidia-rtx-4090 ViT-B/16 batch 1024 (autocast) on RTX 4090" \
         "llava nvidia-a100-sxm-80gb LLaVA-1.5-7B prefill, 1 image + 64 tokens, on A100" \
         "hybrid nvidia-rtx-5090 Nemotron Nano 9B v2 decode (Mamba-2 hybrid) on RTX 5090"; do
  set -- $c
  w=$1 hw=$2
  shift 2
  ms=$(timeit 10 $S run --hw configs/$hw.yaml --trace "$T/$w.json" --quiet)
  awk -v n="$*" -v ms="$ms" 'BEGIN { printf "%s: %8.2f ms wall per run\n", n, ms }'
done
# a system: eight A100s copying to each other over NVSwitch (320 copies)
ms=$(timeit 10 $S run --hw configs/systems/nvidia-dgx-a100.yaml --trace traces/systems/p2p-matrix-8gpu.json --quiet)
ev=$(events $S run --hw configs/systems/nvidia-dgx-a100.yaml --trace traces/systems/p2p-matrix-8gpu.json)
awk -v ms="$ms" -v ev="$ev" 'BEGIN { printf "p2p matrix (320 copies) on DGX A100: %8.2f ms wall per run, %7d events\n", ms, ev }'
# what the reports cost on top of a decode run
base=$(timeit 20 $S run --hw configs/nvidia-h100-sxm.yaml --trace "$T/decode.json" --quiet)
js=$(timeit 20 $S run --hw configs/nvidia-h100-sxm.yaml --trace "$T/decode.json" --json "$T/r.json" --csv "$T/r.csv" --quiet)
# gnuplot's own rendering (about 80 ms) is left out: scripts/bench_out.sh
# and docs/html.md measure what --out adds
export STRATA_GNUPLOT=none
out=$(timeit 10 $S run --hw configs/nvidia-h100-sxm.yaml --trace "$T/decode.json" --out "$T/out" --no-whatif --quiet)
wi=$(timeit 10 $S run --hw configs/nvidia-h100-sxm.yaml --trace "$T/decode.json" --out "$T/out" --quiet)
echo "decode step, reports: none $base ms, --json+--csv $js ms, --out without what-ifs $out ms, --out with the what-if re-simulations (6 on one device) $wi ms (no gnuplot rendering)"
unset STRATA_GNUPLOT
# a design-space sweep: 10,000 H100 variants of the decode step on 2 threads
t0=$(date +%s%N)
$S sweep --hw configs/nvidia-h100-sxm.yaml --trace "$T/decode.json" --vary dram.bandwidth=1TB/s..8TB/s:100 \
  --vary l2.capacity=10MiB..200MiB:100g -j2 --no-progress --csv "$T/sweep.csv" 2>/dev/null
t1=$(date +%s%N)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "sweep: 10000 points of the decode step on H100 variants, -j2: %.1f s (%.2f ms a point)\n", (b - a) / 1e9, (b - a) / 1e6 / 10000 }'
# refitting the A100's three DRAM efficiencies to its six stream rows
ms=$(timeit 3 $S calibrate --hw configs/nvidia-a100-sxm-80gb.yaml --data traces/validation/calibration.csv \
  --fit efficiency.dram,efficiency.dram_rw,efficiency.dram_latency --rows 'UBENCH-00*')
echo "calibrate: three A100 DRAM values on six rows: $ms ms wall"
ms=$(timeit 5 $S validate --data "$T/gemm.csv" --quiet)
echo "LLMC GEMM sweep (20 shapes, A100): $ms ms wall for all 20"
ms=$(timeit 3 $S validate --data traces/validation/calibration.csv --quiet)
echo "whole calibration set ($(($(wc -l <traces/validation/calibration.csv) - 1)) rows): $ms ms wall"
# strata scalesim: the two gpt2 layers SCALE-Sim v2 needs 204 s for on this
# class of machine (../shared/data/README.md; SCALE-Sim is not installed
# here), and ResNet-18's 20 conv layers on a 32x32 array
ms=$(timeit 50 $S scalesim -c traces/scalesim/google-tpu-v1.cfg -t traces/scalesim/gpt2-qkt-linear1.csv -i gemm -p "$T/ss")
awk -v ms="$ms" 'BEGIN { printf "scalesim gpt2 QKT + Linear1 (256x256 ws): %.3f ms wall per run, report included; SCALE-Sim v2 204 s -> %.0fx\n", ms, 204e3 / ms }'
ms=$(timeit 50 $S scalesim -c traces/scalesim/array32-os.cfg -t traces/scalesim/resnet18.csv -p "$T/ss")
echo "scalesim ResNet-18, 20 conv layers, 32x32 os: $ms ms wall per run"
# SCALE-Sim v2 took 77.7 s on this one, run here (traces/scalesim/resnet18-256ws-reference.csv)
ms=$(timeit 50 $S scalesim -c traces/scalesim/google-tpu-v1.cfg -t traces/scalesim/resnet18.csv -p "$T/ss")
awk -v ms="$ms" 'BEGIN { printf "scalesim ResNet-18, 20 conv layers, 256x256 ws: %.3f ms wall per run, report included; SCALE-Sim v2 77.7 s -> %.0fx\n", ms, 77.7e3 / ms }'
# USER bandwidth mode walks every demand row through the SRAM buffers
sed 's/InterfaceBandwidth: CALC/InterfaceBandwidth: USER/' traces/scalesim/array32-os.cfg > "$T/a32-user.cfg"
ms=$(timeit 3 $S scalesim -c "$T/a32-user.cfg" -t traces/scalesim/resnet18.csv -p "$T/ss")
echo "scalesim ResNet-18, 20 conv layers, 32x32 os, USER mode (64 kB SRAMs, 10 words/cycle): $ms ms wall per run"
# many chips: an nccl-tests style all-reduce sweep (20 sizes) on a DGX A100,
# tensor-parallel decode and a data-parallel training step on 8 GPUs, and
# 16 GPUs over two DGX nodes
ms=$(timeit 5 $S bench collective --hw configs/systems/nvidia-dgx-a100.yaml --min 32K --max 16G)
echo "bench collective all_reduce 32K..16G (20 sizes) on DGX A100: $ms ms wall"
$S gen llm --model traces/models/llama-2-70b.json --phase decode --context 2048 --tp 8 -o "$T/tp8.json" >/dev/null
ms=$(timeit 5 $S run --hw configs/systems/nvidia-dgx-a100.yaml --trace "$T/tp8.json" --quiet)
ev=$(events $S run --hw configs/systems/nvidia-dgx-a100.yaml --trace "$T/tp8.json")
awk -v ms="$ms" -v ev="$ev" 'BEGIN { printf "llama-2-70b decode TP=8 on DGX A100 (8 ranks, 160 all-reduces each): %8.2f ms wall per run, %7d events\n", ms, ev }'
$S gen llm --model traces/models/llama-2-7b.json --phase train --batch 4 --prompt 2048 --dp 8 -o "$T/dp8.json" >/dev/null
ms=$(timeit 3 $S run --hw configs/systems/nvidia-dgx-a100.yaml --trace "$T/dp8.json" --quiet)
echo "llama-2-7b training step DP=8 (batch 4 x 2048 per GPU) on DGX A100: $ms ms wall per run"
$S gen llm --model traces/models/llama-2-7b.json --phase train --batch 4 --prompt 2048 --dp 16 -o "$T/dp16.json" >/dev/null
ms=$(timeit 3 $S run --hw configs/systems/two-dgx-a100-hdr.yaml --trace "$T/dp16.json" --quiet)
echo "llama-2-7b training step DP=16 on two DGX A100 nodes (rings or trees over the 8 HDR rails): $ms ms wall per run"
# the runs below write traces with python3 and read peak memory with GNU
# time (Debian packages python3 and time), which the two README commands do
# not install
if ! command -v python3 >/dev/null || [ ! -x /usr/bin/time ]; then
  echo "(skipping the device-scaling and cluster runs: they need python3 and /usr/bin/time)"
  exit 0
fi
# how time and memory grow with devices: one small GEMM per device
for n in 1024 16384 65536; do
  python3 - "$n" "$T/dev.json" <<'PY'
import json, sys
n = int(sys.argv[1])
devs = ["d%d" % i for i in range(n)]
ops = [{"id": "o%d" % i, "kind": "gemm", "device": devs[i], "dtype": "bf16", "m": 64, "n": 64, "k": 64} for i in range(n)]
json.dump({"strata_trace": 1, "devices": devs, "ops": ops}, open(sys.argv[2], "w"))
PY
  /usr/bin/time -f "%e %M" -o "$T/tm" $S run --hw configs/nvidia-h100-sxm.yaml --trace "$T/dev.json" --quiet >/dev/null
  read -r sec kb <"$T/tm"
  echo "$n devices, one 64^3 GEMM each: $sec s wall, peak $((kb / 1024)) MB"
done
# a 1M-op trace (independent 64^3 GEMMs on one GPU): the run alone, and
# with --out (report.json written op by op, ops.csv, timeline, page;
# gnuplot not run)
python3 - "$T/m1.json" <<'PY2'
import json, sys
ops = [{"id": "o%d" % i, "kind": "gemm", "dtype": "bf16", "m": 64, "n": 64, "k": 64} for i in range(1000000)]
json.dump({"strata_trace": 1, "ops": ops}, open(sys.argv[1], "w"))
PY2
# (CPU seconds too: on a shared machine the wall time varies by half)
/usr/bin/time -f "%e %U %S %M" -o "$T/tm" $S run --hw configs/nvidia-h100-sxm.yaml --trace "$T/m1.json" --quiet >/dev/null
read -r sec us ss kb <"$T/tm"
echo "1M-op trace, run: $sec s wall ($us s user, $ss s system), peak $((kb / 1024)) MB"
rm -rf "$T/m1out"
STRATA_GNUPLOT=none /usr/bin/time -f "%e %U %S %M" -o "$T/tm" $S run --hw configs/nvidia-h100-sxm.yaml --trace "$T/m1.json" \
  --out "$T/m1out" --no-whatif --quiet >/dev/null
read -r sec us ss kb <"$T/tm"
echo "1M-op trace, run --out: $sec s wall ($us s user, $ss s system), peak $((kb / 1024)) MB"
rm -rf "$T/m1out" "$T/m1.json"
# symmetric ranks: a Llama-3.1-70B training step at TP 8 on 16, 128 and 2048
# HGX H100 nodes (128, 1024, 16384 GPUs), one data-parallel replica
# simulated and the others mirrors (docs/collectives.md)
for nodes in 16 128 2048; do
  python3 scripts/gen_cluster.py "$nodes" "$T/cluster.yaml"
  sed -i "s#chip: ../nvidia-h100-sxm.yaml#chip: $PWD/configs/nvidia-h100-sxm.yaml#" "$T/cluster.yaml"
  $S gen llm --model traces/models/llama-3.1-70b.json --phase train --batch 1 --prompt 4096 --tp 8 \
     --dp "$nodes" --replicas-simulated 1 -o "$T/sym.json" >/dev/null
  /usr/bin/time -f "%e %M" -o "$T/tm" $S run --hw "$T/cluster.yaml" --trace "$T/sym.json" --json "$T/sym-r.json" --quiet >/dev/null
  read -r sec kb <"$T/tm"
  step=$(grep -o '"total_time_s":[[:space:]]*[0-9.e+-]*' "$T/sym-r.json" | head -1 | grep -o '[0-9.e+-]*$')
  echo "llama-3.1-70b train TP 8 x DP $nodes ($((nodes * 8)) GPUs, 1 replica simulated): step $step s, $sec s wall, peak $((kb / 1024)) MB"
done
# every replica simulated: SmolLM-135M data-parallel on one HGX H100 (8
# GPUs) and on 128 of them (1,024 GPUs); CPU per engine event should not
# grow with the devices (issue 37 asks for within 1.5x)
python3 scripts/gen_cluster.py 128 "$T/c128.yaml"
sed -i "s#chip: ../nvidia-h100-sxm.yaml#chip: $PWD/configs/nvidia-h100-sxm.yaml#" "$T/c128.yaml"
for dp in 8 1024; do
  hw=configs/systems/nvidia-hgx-h100.yaml
  [ "$dp" = 8 ] || hw="$T/c128.yaml"
  $S gen llm --model traces/models/smollm-135m.json --phase train --batch 1 --prompt 2048 --dp "$dp" \
     -o "$T/smol.json" >/dev/null
  reps=1
  [ "$dp" = 8 ] && reps=20         # a run of tens of ms: CPU over 20 runs
  /usr/bin/time -f "%U %S %M" -o "$T/tm" bash -c "for i in \$(seq $reps); do '$S' run --hw '$hw' --trace '$T/smol.json' --quiet >/dev/null; done"
  read -r us ss kb <"$T/tm"
  ev=$(events $S run --hw "$hw" --trace "$T/smol.json")
  awk -v dp="$dp" -v us="$us" -v ss="$ss" -v ev="$ev" -v n="$reps" -v kb="$kb" 'BEGIN { printf "smollm-135m train DP %d, all replicas simulated: %d events, %.3f us CPU an event (load included), peak %d MB\n", dp, ev, (us + ss) / n / ev * 1e6, kb / 1024 }'
done
rm -f "$T/smol.json"
# MoE 4D: Mixtral-8x7B on 64 H100s, EP 8 inside DP 16 on each of 4
# interleaved pipeline stages (VP 8), ZeRO-1, half the replicas simulated
# (traces/validation/megatron-moe.csv's row)
$S gen llm --model traces/models/mixtral-8x7b.json --phase train --batch 16 --prompt 4096 --pp 4 --vpp 8 \
   --dp 16 --ep 8 --zero 1 --microbatches 16 --replicas-simulated 8 --attn cudnn -o "$T/moe.json" >/dev/null
/usr/bin/time -f "%e %M" -o "$T/tm" $S run --hw configs/systems/hgx-h100-x8-ndr.yaml --trace "$T/moe.json" \
  --json "$T/moe-r.json" --quiet >/dev/null
read -r sec kb <"$T/tm"
step=$(grep -o '"total_time_s":[[:space:]]*[0-9.e+-]*' "$T/moe-r.json" | head -1 | grep -o '[0-9.e+-]*$')
nops=$(grep -c '"kind"' "$T/moe.json" || true)
echo "mixtral-8x7b train EP 8 x PP 4 (VP 8) x DP 16 (64 GPUs, 32 simulated, $nops ops): step $step s, $sec s wall, peak $((kb / 1024)) MB"
# context parallelism with gradient accumulation: Llama-3.1-8B CP 2 x DP 4
# on one HGX H100, 32 micro-batches of one 8192-token sequence a replica
# (traces/validation/dgxc-h100.csv's DGXC-L8B-008)
$S gen llm --model traces/models/llama-3.1-8b.json --phase train --batch 32 --microbatches 32 --prompt 8192 \
   --cp 2 --dp 4 --zero 1 --attn cudnn --replicas-simulated 1 -o "$T/cp.json" >/dev/null
/usr/bin/time -f "%e %M" -o "$T/tm" $S run --hw configs/systems/nvidia-hgx-h100.yaml --trace "$T/cp.json" \
  --json "$T/cp-r.json" --quiet >/dev/null
read -r sec kb <"$T/tm"
step=$(grep -o '"total_time_s":[[:space:]]*[0-9.e+-]*' "$T/cp-r.json" | head -1 | grep -o '[0-9.e+-]*$')
nops=$(grep -c '"kind"' "$T/cp.json" || true)
echo "llama-3.1-8b train CP 2 x DP 4, 32 micro-batches (8 GPUs, 2 simulated, $nops ops): step $step s, $sec s wall, peak $((kb / 1024)) MB"
