#!/usr/bin/env bash
# Gate 2 of mt-moe: data neither set uses (seeds 9-11; the sets use 1-5). Multi-turn, 10,000 requests, MoE at
# 45 req/s and 8B at 70 req/s (their race loads). Usage: gate2.sh OUT_FOLDER [POLICIES]
#   the branch's prefix_aware:       bench/results/mt-moe/gate2.sh mt-moe/gate2 prefix_aware
#   main's (run from a worktree of main, c59f4ce6): bench/results/mt-moe/gate2.sh mt-moe/gate2-main prefix_aware,llmd,dynamo
set -euo pipefail
out=$1
pol=()
if [[ -n "${2:-}" ]]; then pol=(--policies "$2"); fi
for seed in 9 10 11; do
  for pr in "qwen3-30b-a3b-h100-vllm 45" "llama-3.1-8b-h100-vllm 70"; do
    read -r preset rate <<<"$pr"
    nice -n 10 npx tsx sim/main.ts --workload multi-turn --backends 8 --requests 10000 --rate "$rate" --seed "$seed" \
      --preset "$preset" --kv-allocation incremental --out "bench/results/$out" "${pol[@]}" \
      --name "multi-turn-8b-r${rate}-s${seed}-$preset" | tail -1
  done
done
