#!/usr/bin/env bash
# The hit gauge (hit-gauge.ts) over the four Mooncake groups of the tuning set, seeds 1-2, tie 0.8-1.2 ms. Run from
# the tree whose policy is measured (hit-gauge.ts copied into it); export MOONCAKE_TRACE first.
#   bench/results/tc-hit/hit-gauge.sh > bench/results/tc-hit/hit-gauge-main.txt   (from a detached worktree of main)
set -euo pipefail
for g in "8 2 qwen3-30b-a3b-h100-vllm" "16 4 qwen3-30b-a3b-h100-vllm" "8 2.5 llama-3.1-8b-h100-vllm" "16 5 llama-3.1-8b-h100-vllm"; do
  read -r b x preset <<<"$g"
  for seed in 1 2; do
    for tie in 0.8 0.9 1 1.1 1.2; do
      printf 'mooncake %sb x%s s%s %s ' "$b" "$x" "$seed" "$preset"
      TIE=$tie nice -n 10 npx tsx bench/results/tc-hit/hit-gauge.ts mooncake "$b" "$x" tuning "$seed" "$preset"
    done
  done
done
