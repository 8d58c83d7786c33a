#!/usr/bin/env bash
# The tolerance gauge (../gauge.sh) on three groups, for a diagnostic variant: run from the branch's tree with
# queue-only.patch or residual-only.patch applied; $1 labels the lines. Tie 0.8–1.2 ms, tuning seeds 1–2.
#   bench/results/step-resid-2/diag/gauge-diag.sh queue-only >> bench/results/step-resid-2/diag/gauge-diag.txt
set -euo pipefail
G=bench/results/admission-view/gauge.ts
MOE=qwen3-30b-a3b-h100-vllm; LLAMA=llama-3.1-8b-h100-vllm
for run in "multi-turn 8 45 $MOE 10000" "zipf 8 65 $MOE" "multi-turn 8 70 $LLAMA 10000"; do
  read -r w b load preset req <<<"$run"
  for seed in 1 2; do
    for tie in 0.8 0.9 1 1.1 1.2; do
      printf '%s %s %s s%s %s: ' "$1" "$w" "$load" "$seed" "$preset"
      if [[ -n ${req:-} ]]; then export REQUESTS=$req; else unset REQUESTS; fi
      TIE=$tie nice -n 10 npx tsx "$G" "$w" "$b" "$load" tuning "$seed" "$preset"
    done
  done
done
