#!/usr/bin/env bash
# Gate 2 of rescore-mc: Mooncake's scoring half replayed with arrival seeds 25-32 (reserved for this branch;
# nobody had run them), the four Mooncake groups at the race's loads (bench/sim-all.sh: 8B 8 x2.5, 8B 16 x5,
# MoE 8 x2, MoE 16 x4). Usage: gate2.sh OUT_FOLDER [POLICIES] [SEEDS]
#   main, with the peers:  bench/results/rescore-mc/gate2.sh rescore-mc/g2-main prefix_aware,llmd,dynamo
#   a patch applied:       bench/results/rescore-mc/gate2.sh rescore-mc/g2-fallback prefix_aware
set -euo pipefail
out=$1
pol=()
if [[ -n "${2:-}" ]]; then pol=(--policies "$2"); fi
seeds=${3:-"25 26 27 28 29 30 31 32"}
LLAMA=llama-3.1-8b-h100-vllm
MOE=qwen3-30b-a3b-h100-vllm
for seed in $seeds; do
  for g in "8 2.5 $LLAMA" "16 5 $LLAMA" "8 2 $MOE" "16 4 $MOE"; do
    read -r b x preset <<<"$g"
    nice -n 10 npx tsx sim/main.ts --workload mooncake --backends "$b" --speed "$x" --set scoring --seed "$seed" \
      --preset "$preset" --kv-allocation incremental --out "bench/results/$out" "${pol[@]}" \
      --name "mooncake-${b}b-x${x}-scoring-s${seed}-$preset" | tail -1
  done
done
