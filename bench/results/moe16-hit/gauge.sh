#!/usr/bin/env bash
# The tie gauge of this branch's policy on the scoring set (seeds 3-5) for the groups the own-history exemption can
# move (every Mooncake-based group: the others' tuning and unused-seed runs are identical to main's), at 0.8 / 1 /
# 1.2 ms, one JSON line a run, through count-gauge/gauge.ts. Main's are count-gauge/gauge-1a7c4899.jsonl (no
# routing or simulator change since). Run from this branch; export MOONCAKE_TRACE first.
#   bench/results/moe16-hit/gauge.sh > bench/results/moe16-hit/gauge-branch.jsonl
set -euo pipefail
MOE=qwen3-30b-a3b-h100-vllm
LLAMA=llama-3.1-8b-h100-vllm
RUNS=("mooncake 16 4 $MOE" "mooncake 8 2 $MOE" "mooncake 8 2.5 $LLAMA" "mooncake 16 5 $LLAMA"
  "burst-mooncake 8 28 $LLAMA" "burst-mooncake 8 32 $MOE")
for run in "${RUNS[@]}"; do
  read -r w b load preset <<<"$run"
  for seed in 3 4 5; do
    for tie in ${TIES:-0.8 1 1.2}; do
      TIE=$tie nice -n 10 npx tsx bench/results/count-gauge/gauge.ts "$w" "$b" "$load" scoring "$seed" "$preset"
    done
  done
done
