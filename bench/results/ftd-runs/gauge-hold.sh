#!/usr/bin/env bash
# The tie gauge (0.8 / 1.2 ms) of the hold's two groups, no-shared-prefix MoE and Zipf MoE, scoring seeds 3–5,
# notices at once, 50 ms late, and 50 ms late with the hold off (branch ft-delay).
set -euo pipefail
cd "$(dirname "$0")/../../.."
export DELAYS=${DELAYS:-"0 50:0.5:20 50:0.5:20,nofirst"}
for tie in 0.8 1.2; do
  for s in 3 4 5; do
    TIE=$tie nice -n 10 npx tsx bench/results/ftd-runs/overrun.ts no-shared-prefix 8 25 scoring $s qwen3-30b-a3b-h100-vllm 2>/dev/null
    TIE=$tie nice -n 10 npx tsx bench/results/ftd-runs/overrun.ts zipf 8 65 scoring $s qwen3-30b-a3b-h100-vllm 2>/dev/null
  done
done
