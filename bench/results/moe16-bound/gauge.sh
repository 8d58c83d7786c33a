#!/usr/bin/env bash
# (from moe16-hit/gauge.sh) The tie gauge of a tree's policy on the scoring set (seeds 3-5) for the groups the own-history exemption can
# move (every Mooncake-based group: the others' tuning and unused-seed runs are identical to main's), at 0.8 / 1 /
# 1.2 ms, one JSON line a run, through count-gauge/gauge.ts. main has changed src/routing since count-gauge's
# gauge-1a7c4899.jsonl, so main (693b01d3) is re-run beside it: the same script run from /work/main
# (gauge-main.jsonl). Export MOONCAKE_TRACE first.
#   bench/results/moe16-bound/gauge.sh > bench/results/moe16-bound/gauge-branch.jsonl
#   (cd /work/main && $OLDPWD/bench/results/moe16-bound/gauge.sh) > bench/results/moe16-bound/gauge-main.jsonl
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
