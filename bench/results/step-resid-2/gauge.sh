#!/usr/bin/env bash
# Tolerance gauge for gate 1's moved groups (as step-residual/noise.txt): prefix_aware's tuning-set p50/p99 with
# the tie tolerance moved (0.8–1.2 ms), a perturbation of no meaning that shows how far a p99 moves by chance.
# Run from the tree whose policy is measured (this branch, or a detached worktree of main at the same base);
# TIE=1 reproduces bench:sim's run of record to the ms. export MOONCAKE_TRACE first.
#   bench/results/step-resid-2/gauge.sh > bench/results/step-resid-2/gauge-branch.txt
#   (cd <main worktree> && /abs/path/bench/results/step-resid-2/gauge.sh) > bench/results/step-resid-2/gauge-main.txt
set -euo pipefail
G=bench/results/admission-view/gauge.ts
MOE=qwen3-30b-a3b-h100-vllm
LLAMA=llama-3.1-8b-h100-vllm
for run in "multi-turn 8 45 $MOE 10000" "multi-turn 8 70 $LLAMA 10000" "zipf 8 65 $MOE" \
  "generated-shared-prefix 8 50 $MOE" "mooncake 8 2 $MOE"; do
  read -r w b load preset req <<<"$run"
  for seed in 1 2; do
    for tie in 0.8 0.9 1 1.1 1.2; do
      printf '%s %sb %s s%s %s: ' "$w" "$b" "$load" "$seed" "$preset"
      if [[ -n ${req:-} ]]; then export REQUESTS=$req; else unset REQUESTS; fi
      TIE=$tie nice -n 10 npx tsx "$G" "$w" "$b" "$load" tuning "$seed" "$preset"
    done
  done
done
