#!/usr/bin/env bash
# The count gauge (gauge.ts) over issue #12's scoring groups, seeds 3-5 (the scoring set's, as bench/sim-all.sh
# scoring runs them: same workloads, loads, presets, incremental allocation), tie tolerance 0.8-1.2 ms (1: the
# record's default, which must reproduce after-rescore; summary.ts checks it). One JSON line a run. Run from the
# tree whose policy is measured (main's); export MOONCAKE_TRACE first.
#   bench/results/count-gauge/gauge.sh near > bench/results/count-gauge/gauge.jsonl    the five near-line groups
#   bench/results/count-gauge/gauge.sh rest >> bench/results/count-gauge/gauge.jsonl   the other eleven
set -euo pipefail
MOE=qwen3-30b-a3b-h100-vllm
LLAMA=llama-3.1-8b-h100-vllm
# name backends load preset [requests], as bench/sim-all.sh's WORKLOADS; near: the brief's priority order.
NEAR=("burst-mooncake 8 28 $LLAMA" "mooncake 16 4 $MOE" "mooncake 8 2 $MOE" "zipf 8 65 $MOE"
  "multi-turn 8 45 $MOE 10000")
# rest: nearest a line first (no-shared-prefix MoE −10.0%, generated-shared-prefix MoE +1.3%, ...).
REST=("no-shared-prefix 8 25 $MOE" "generated-shared-prefix 8 50 $MOE" "zipf 8 40 $LLAMA" "burst 8 28 $LLAMA"
  "mooncake 8 2.5 $LLAMA" "mooncake 16 5 $LLAMA" "generated-shared-prefix 8 30 $LLAMA"
  "no-shared-prefix 8 15 $LLAMA" "burst-mooncake 8 32 $MOE" "multi-turn 8 70 $LLAMA 10000" "burst 8 32 $MOE")
case "${1:-}" in
  near) RUNS=("${NEAR[@]}") ;;
  rest) RUNS=("${REST[@]}") ;;
  *)
    echo "usage: gauge.sh near|rest" >&2
    exit 2
    ;;
esac
for run in "${RUNS[@]}"; do
  read -r w b load preset req <<<"$run"
  for seed in 3 4 5; do
    for tie in 0.8 0.9 1 1.1 1.2; do
      if [[ -n ${req:-} ]]; then export REQUESTS=$req; else unset REQUESTS; fi
      TIE=$tie nice -n 10 npx tsx bench/results/count-gauge/gauge.ts "$w" "$b" "$load" scoring "$seed" "$preset"
    done
  done
done
