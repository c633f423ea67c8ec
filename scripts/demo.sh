#!/usr/bin/env bash
# One command: install what is missing, build, and predict one Llama-2-7B
# decode step (bf16, batch 1, 2048 tokens of context) on an H100 SXM.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
mkdir -p out
./build/strata info --hw configs/nvidia-h100-sxm.yaml
echo
./build/strata gen llm --model traces/models/llama-2-7b.json --phase decode --batch 1 \
  --context 2048 --dtype bf16 -o out/llama-2-7b-decode-2048.json
./build/strata run --hw configs/nvidia-h100-sxm.yaml --trace out/llama-2-7b-decode-2048.json \
  --out out/demo
echo
echo "the same step on a TPU v5e (systolic MXUs; docs/tpu.md):"
./build/strata run --hw configs/google-tpu-v5e.yaml --trace out/llama-2-7b-decode-2048.json --top 3
echo
echo "eight A100s on NVSwitch copying to each other, as p2pBandwidthLatencyTest does (docs/systems.md):"
./build/strata run --hw configs/systems/nvidia-dgx-a100.yaml --trace traces/systems/p2p-matrix-8gpu.json --top 3
echo
echo "open out/demo/report.html in a browser; drag out/demo/timeline.json into ui.perfetto.dev"
