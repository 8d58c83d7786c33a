#!/usr/bin/env bash
# moe-tail (2026-12-02): issue #12's two MoE near misses, our slowest 1% by cause against the best peer (llm-d)
# and the clairvoyant reference (uncapped, and within the 1.25 request cap), tuning seeds 1-2, one run at a time.
#   bash bench/results/moe-tail/zipf-mt/run.sh          (≈ 6 min on 2 shared cores)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
out=bench/results/moe-tail/zipf-mt
m=qwen3-30b-a3b-h100-vllm
for s in 1 2; do
  for p in llmd clairvoyant clairvoyant_capped; do
    nice -n 10 npx tsx bench/results/near-miss/tail-cause.ts zipf 8 65 tuning $s $m $p > $out/cause-zipf-moe-s$s-$p.txt
    REQUESTS=10000 nice -n 10 npx tsx bench/results/near-miss/tail-cause.ts multi-turn 8 45 tuning $s $m $p > $out/cause-mt-moe-s$s-$p.txt
  done
done
