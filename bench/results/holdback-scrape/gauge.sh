#!/usr/bin/env bash
# Noise gauge, scrape on: Mooncake MoE 8 ×2, tuning half, seeds 1-2 × tie tolerance 0.9/1/1.1/1.2 ms, via
# bench/results/engine-memory/tail.ts (which runs with the scrape every 1000 ms), from one checkout.
# usage: bash bench/results/holdback-scrape/gauge.sh CHECKOUT LABEL
export MOONCAKE_TRACE=${MOONCAKE_TRACE:-/work/shared/traces/mooncake_conversation.jsonl}
cd "$1"
for seed in 1 2; do for tie in 0.9 1 1.1 1.2; do
  p=$(SHOW=0 TIE=$tie nice -n 10 npx tsx bench/results/engine-memory/tail.ts mooncake 8 2 tuning $seed qwen3-30b-a3b-h100-vllm 2>&1 | head -1)
  echo "$2 seed $seed tie $tie: $p"
done; done
