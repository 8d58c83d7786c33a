#!/usr/bin/env bash
# mt-tail's audit: multi-turn MoE (45 req/s, 10,000 requests) and Zipf 8B (40 req/s), tuning seeds 1-2 and scoring
# seeds 3-5, prefix_aware (main's policy, first-token hold in place) against Dynamo at TIE 1, then prefix_aware alone
# at TIE 0.8 and 1.2 (the tie gauge). One run at a time.   bash bench/results/mtt-audit/run.sh [zipf|mt] [ties]
# RUNS="tuning 1,scoring 3" restricts the set/seed pairs. Multi-turn tuning seed 2 (the memory crunch) is slow:
# the probes step copies of full engines; it was left out of the audit's figures (see the README).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=bench/results/mtt-audit
groups=${1:-"zipf mt"}
ties=${2:-"1 0.8 1.2"}
for t in $ties; do
  routers="prefix_aware dynamo"
  [ "$t" = 1 ] || routers=prefix_aware
  for g in $groups; do
    IFS=, read -ra pairs <<< "${RUNS:-tuning 1,tuning 2,scoring 3,scoring 4,scoring 5}"
    for p in "${pairs[@]}"; do
      set -- $p
      if [ "$g" = zipf ]; then
        TIE=$t ROUTERS="$routers" JSON=$out/tail.jsonl nice -n 10 npx tsx $out/tail-hold.ts zipf 8 40 $1 $2 llama-3.1-8b-h100-vllm > $out/zipf-8b-$1-s$2-tie$t.txt
      else
        REQUESTS=10000 TIE=$t ROUTERS="$routers" JSON=$out/tail.jsonl nice -n 10 npx tsx $out/tail-hold.ts multi-turn 8 45 $1 $2 qwen3-30b-a3b-h100-vllm > $out/mt-moe-$1-s$2-tie$t.txt
      fi
    done
  done
done
