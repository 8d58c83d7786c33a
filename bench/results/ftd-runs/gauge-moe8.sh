#!/usr/bin/env bash
# The tie gauge on Mooncake MoE 8 (the group nearest a line at d = 20: p99 and hit), scoring seeds 3–5, at
# TIE 0.8 and 1.2 ms, notices at the engine's instant and 20 / 50 ms late (branch ft-delay).
set -euo pipefail
cd "$(dirname "$0")/../../.."
export MOONCAKE_TRACE=${MOONCAKE_TRACE:-/work/shared/traces/mooncake_conversation.jsonl}
export DELAYS=${DELAYS:-"0 20:0.5:20 50:0.5:20"}
for tie in 0.8 1.2; do
  for s in 3 4 5; do
    TIE=$tie nice -n 15 npx tsx bench/results/ftd-runs/overrun.ts mooncake 8 2 scoring $s qwen3-30b-a3b-h100-vllm 2>/dev/null
  done
done
