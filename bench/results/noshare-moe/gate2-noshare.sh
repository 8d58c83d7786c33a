#!/usr/bin/env bash
# Gate 2's missing group: moe8-resid/gate2.sh runs no no-shared-prefix, the group this branch targets. Synthetic seeds
# 41-44 (this branch's), both presets at the race's loads (bench/sim-all.sh: 8B 15 req/s, MoE 25 req/s). Run from the
# tree whose policy is measured; OUT is an absolute folder.
#   bench/results/noshare-moe/gate2-noshare.sh $PWD/bench/results/noshare-moe/g2-branch
#   (cd <main tree> && <this>/gate2-noshare.sh <this dir>/g2-main)
set -euo pipefail
out=$1
for seed in ${SYN_SEEDS-41 42 43 44}; do
  nice -n 10 npx tsx sim/main.ts --workload no-shared-prefix --backends 8 --rate 15 --seed "$seed" --preset llama-3.1-8b-h100-vllm \
    --policies prefix_aware --kv-allocation incremental --out "$out" --name "no-shared-prefix-8b-r15-unused-s$seed" | tail -1
  nice -n 10 npx tsx sim/main.ts --workload no-shared-prefix --backends 8 --rate 25 --seed "$seed" --preset qwen3-30b-a3b-h100-vllm \
    --policies prefix_aware --kv-allocation incremental --out "$out" --name "no-shared-prefix-8b-r25-unused-s$seed-qwen3-30b-a3b-h100-vllm" | tail -1
done
