#!/usr/bin/env bash
# Mooncake MoE, the scoring half replayed with arrival seeds nobody used (9-16; the set's run is seed 1,
# mooncake-moe-arrivals/ used 3-5, admit-isl's gate 2 used 6-8), every policy, on 16 backends x4 and 8 x2
# (the race's loads after the re-sweep). Usage: arrivals.sh OUT_FOLDER [POLICIES] [SEEDS]
set -euo pipefail
out=$1
pol=()
if [[ -n "${2:-}" ]]; then pol=(--policies "$2"); fi
seeds=${3:-"9 10 11 12 13 14 15 16"}
MOE=qwen3-30b-a3b-h100-vllm
for seed in $seeds; do
  for bx in "16 4" "8 2"; do
    read -r b x <<<"$bx"
    nice -n 10 npx tsx sim/main.ts --workload mooncake --backends "$b" --speed "$x" --set scoring --seed "$seed" \
      --preset "$MOE" --kv-allocation incremental --out "bench/results/$out" "${pol[@]}" \
      --name "mooncake-${b}b-x${x}-scoring-s${seed}-$MOE" | tail -1
  done
done
