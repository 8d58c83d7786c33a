#!/usr/bin/env bash
# A wider tolerance gauge for multi-turn MoE 45 (tuning seeds 1–2), the one group tight-copy moves: prefix_aware's
# p50/p99 over eleven tie tolerances 0.5–1.5 ms (step-resid-2/gauge.sh takes five, 0.8–1.2), a perturbation of no
# meaning, to compare the two policies' distributions on the chaotic seed 2 rather than one draw. Run from each
# tree (this branch; a detached worktree of main at the same base). export MOONCAKE_TRACE first (unused here).
#   bench/results/tight-copy/gauge-wide.sh > bench/results/tight-copy/gauge-wide-branch.txt
#   (cd <main worktree> && /abs/path/bench/results/tight-copy/gauge-wide.sh) > bench/results/tight-copy/gauge-wide-main.txt
set -euo pipefail
G=bench/results/admission-view/gauge.ts
for seed in 1 2; do
  for tie in 0.5 0.6 0.7 0.8 0.9 1 1.1 1.2 1.3 1.4 1.5; do
    printf 'multi-turn 8b 45 s%s: ' "$seed"
    REQUESTS=10000 TIE=$tie nice -n 10 npx tsx "$G" multi-turn 8 45 tuning "$seed" qwen3-30b-a3b-h100-vllm
  done
done
