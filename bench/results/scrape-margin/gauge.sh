#!/usr/bin/env bash
# The tie-tolerance gauge of Mooncake MoE 8 ×2, scoring half, four arrivals, scrape off and at 1000 ms:
# p99 of prefix_aware per (seed, tie), one run at a time. TIE=1 is the default tolerance (the figures of
# mooncake-moe-arrivals/). Usage: MOONCAKE_TRACE=… bash bench/results/scrape-margin/gauge.sh > FILE
set -euo pipefail
cd "$(dirname "$0")/../../.."
for seed in ${SEEDS:-1 3 4 5}; do
  for tie in ${TIES:-0.9 1 1.1 1.2}; do
    for scrape in 0 1000; do
      line=$(BRIEF=1 SCRAPE_MS=$scrape TIE=$tie nice -n 10 npx tsx bench/results/scrape-margin/audit.ts mooncake 8 2 scoring "$seed" qwen3-30b-a3b-h100-vllm)
      echo "seed $seed tie $tie scrape $scrape: $line"
    done
  done
done
