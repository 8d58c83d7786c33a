#!/usr/bin/env bash
# Gate 2 of admit-isl: data neither set uses. Mooncake MoE, the scoring half replayed with arrival seeds 6-8
# (mooncake-moe-arrivals/ used 1, 3, 4, 5), on 8 backends x2 and 16 backends x4.1; multi-turn MoE at 40 req/s
# (10,000 requests) on seeds 6-8 (the sets use 1-5). Usage: gate2.sh OUT_FOLDER [POLICIES]
#   every policy with the branch's code: bench/results/admit-isl/gate2.sh admit-isl/gate2
#   main's prefix_aware (src/ of main checked out in the work tree for the run): ... admit-isl/gate2-main prefix_aware
set -euo pipefail
out=$1
pol=()
if [[ -n "${2:-}" ]]; then pol=(--policies "$2"); fi
MOE=qwen3-30b-a3b-h100-vllm
for seed in 6 7 8; do
  for bx in "8 2" "16 4.1"; do
    read -r b x <<<"$bx"
    nice -n 10 npx tsx sim/main.ts --workload mooncake --backends "$b" --speed "$x" --set scoring --seed "$seed" \
      --preset "$MOE" --kv-allocation incremental --out "bench/results/$out" "${pol[@]}" \
      --name "mooncake-${b}b-x${x}-scoring-s${seed}-$MOE" | tail -2
  done
  nice -n 10 npx tsx sim/main.ts --workload multi-turn --backends 8 --requests 10000 --rate 40 --seed "$seed" \
    --preset "$MOE" --kv-allocation incremental --out "bench/results/$out" "${pol[@]}" \
    --name "multi-turn-8b-r40-s${seed}-$MOE" | tail -2
done
