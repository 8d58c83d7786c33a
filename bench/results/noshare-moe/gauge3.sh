#!/usr/bin/env bash
# count-gauge's gauge (../count-gauge/gauge.ts) on this branch for the groups near a line, scoring seeds 3-5, tie
# tolerance 0.8 and 1.2 ms (1 ms is gate 3's run itself); main's figures are count-gauge's gauge-1a7c4899.jsonl.
#   bench/results/noshare-moe/gauge3.sh a > bench/results/noshare-moe/gauge3-a.jsonl
#   bench/results/noshare-moe/gauge3.sh b > bench/results/noshare-moe/gauge3-b.jsonl
set -euo pipefail
MOE=qwen3-30b-a3b-h100-vllm
LLAMA=llama-3.1-8b-h100-vllm
A=("no-shared-prefix 8 25 $MOE" "zipf 8 65 $MOE" "mooncake 8 2 $MOE" "mooncake 16 4 $MOE")
B=("burst-mooncake 8 28 $LLAMA" "multi-turn 8 45 $MOE 10000")
case "${1:-}" in
  a) RUNS=("${A[@]}") ;;
  b) RUNS=("${B[@]}") ;;
  *) echo "usage: gauge3.sh a|b" >&2; exit 2 ;;
esac
for run in "${RUNS[@]}"; do
  read -r w b load preset req <<<"$run"
  for tie in 0.8 1.2; do
    for seed in 3 4 5; do
      if [[ -n ${req:-} ]]; then export REQUESTS=$req; else unset REQUESTS; fi
      TIE=$tie nice -n 10 npx tsx bench/results/count-gauge/gauge.ts "$w" "$b" "$load" scoring "$seed" "$preset"
    done
  done
done
