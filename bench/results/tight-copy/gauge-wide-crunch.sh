#!/usr/bin/env bash
# crunch-gauge.ts over eleven tie tolerances (0.5–1.5 ms) on multi-turn MoE 45, tuning seed 2 (the crunch seed).
# Run from the tree measured, with crunch-gauge.ts at the same path there:
#   bench/results/tight-copy/gauge-wide-crunch.sh > bench/results/tight-copy/gauge-crunch-branch.txt
set -euo pipefail
for tie in 0.5 0.6 0.7 0.8 0.9 1 1.1 1.2 1.3 1.4 1.5; do
  REQUESTS=10000 TIE=$tie nice -n 10 npx tsx bench/results/tight-copy/crunch-gauge.ts multi-turn 8 45 tuning 2 \
    qwen3-30b-a3b-h100-vllm
done
