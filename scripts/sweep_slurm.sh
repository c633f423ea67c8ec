#!/bin/bash
# A strata sweep as a Slurm job array (docs/sweep.md): 64 shards, then merge
# with: strata sweep --merge sweep/shard-*-of-64.csv -o sweep/sweep.csv
#SBATCH --job-name=strata-sweep
#SBATCH --array=0-63
#SBATCH --cpus-per-task=4
#SBATCH --time=00:30:00
set -euo pipefail
strata sweep --hw configs/nvidia-h100-sxm.yaml --trace traces/examples/llama-2-7b-decode-b1-ctx2048.json \
             --vary dram.bandwidth=1TB/s..8TB/s:100 --vary l2.capacity=10MiB..200MiB:100g \
             -j "${SLURM_CPUS_PER_TASK:-1}" --shard "${SLURM_ARRAY_TASK_ID}/64" --out sweep/ --no-progress
