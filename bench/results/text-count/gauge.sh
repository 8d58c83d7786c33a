#!/usr/bin/env bash
# Tolerance gauge for the target group only (step-resid-2/gauge.sh's Mooncake MoE 8 line): prefix_aware's tuning
# p50/p99 with the tie tolerance moved (0.8–1.2 ms), a perturbation of no meaning that shows how far a p99 moves
# by chance. Run from the tree whose policy is measured; export MOONCAKE_TRACE first.
#   bench/results/text-count/gauge.sh > bench/results/text-count/gauge-branch.txt
#   (cd <detached worktree of main> && /abs/path/bench/results/text-count/gauge.sh) > bench/results/text-count/gauge-main.txt
set -euo pipefail
G=bench/results/admission-view/gauge.ts
for seed in 1 2; do
  for tie in 0.8 0.9 1 1.1 1.2; do
    printf 'mooncake 8b 2 s%s qwen3-30b-a3b-h100-vllm tie %s: ' "$seed" "$tie"
    TIE=$tie nice -n 10 npx tsx "$G" mooncake 8 2 tuning "$seed" qwen3-30b-a3b-h100-vllm
  done
done
