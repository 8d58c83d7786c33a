#!/usr/bin/env bash
# The workload × preset matrix of bench/results/policy-work.md: every run is one bench:sim command.
#
#   bench/policy-work/matrix.sh tuning|scoring OUTDIR [POLICIES]
#
# Loads: per preset, the first load of the tuning-set sweep (least_outstanding) whose p99 TTFT is
# ≥ 2 × its idle p99 (bench/results/policy-work/sweeps/, a coarse grid then a fine one); Mooncake 16 backends at twice the
# 8-backend speed; burst (scored only) at 16 requests/s, one group of 16 a second, as burst.md.
# tuning: seeds 1-2 and Mooncake's first half; scoring: seeds 3-5, burst, Mooncake's second half.
set -euo pipefail
set_name=${1:?tuning or scoring}
out=${2:?output directory}
policies=${3:-all}
export MOONCAKE_TRACE=${MOONCAKE_TRACE:-/work/shared/traces/mooncake_conversation.jsonl}
cd "$(dirname "$0")/../.."
if [ "$set_name" = tuning ]; then seeds="1 2"; else seeds="3 4 5"; fi
sim() { npm run -s bench:sim -- --policies "$policies" --set "$set_name" --out "$out" "$@"; }
for preset in llama-3.1-8b-h100-vllm qwen3-30b-a3b-h100-vllm; do
  if [ "$preset" = llama-3.1-8b-h100-vllm ]; then
    gsp=30 mt=70 zipf=40 nsp=18 mc=2.5
  else
    gsp=45 mt=40 zipf=65 nsp=22 mc=1.8
  fi
  for seed in $seeds; do
    sim --preset "$preset" --seed "$seed" --workload generated-shared-prefix --backends 8 --rate "$gsp"
    sim --preset "$preset" --seed "$seed" --workload multi-turn --backends 8 --rate "$mt" --requests 10000
    sim --preset "$preset" --seed "$seed" --workload zipf --backends 8 --rate "$zipf"
    sim --preset "$preset" --seed "$seed" --workload no-shared-prefix --backends 8 --rate "$nsp"
    if [ "$set_name" = scoring ]; then
      sim --preset "$preset" --seed "$seed" --workload burst --backends 8 --rate 16
    fi
  done
  sim --preset "$preset" --workload mooncake --backends 8 --speed "$mc"
  sim --preset "$preset" --workload mooncake --backends 16 --speed "$(echo "$mc * 2" | bc)"
done
