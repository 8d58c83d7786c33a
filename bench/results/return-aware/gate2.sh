#!/usr/bin/env bash
# Gate 2 of return-aware: data nobody tuned on, main's policy (returnAware off) against this branch's (on) in
# one process per run (pair.ts), tie tolerance 1 ms (TIES to change). Mooncake's scoring half with arrival seeds
# MC_SEEDS (89-96, assigned to this branch), the four Mooncake groups at the race's speeds; synthetic seeds
# SYN_SEEDS (37-40) of multi-turn, generated-shared-prefix and zipf at the race's loads, both presets (as
# ../moe8-resid/gate2.sh). One JSON line a (run, on/off) on stdout. Export MOONCAKE_TRACE first.
#   bench/results/return-aware/gate2.sh mooncake > bench/results/return-aware/gate2-mooncake.jsonl
#   bench/results/return-aware/gate2.sh synthetic > bench/results/return-aware/gate2-synthetic.jsonl
set -euo pipefail
LLAMA=llama-3.1-8b-h100-vllm
MOE=qwen3-30b-a3b-h100-vllm
pair() { nice -n 10 npx tsx bench/results/return-aware/pair.ts "$@"; }
case "${1:-}" in
  mooncake)
    for seed in ${MC_SEEDS-89 90 91 92 93 94 95 96}; do
      for g in "8 2.5 $LLAMA" "16 5 $LLAMA" "8 2 $MOE" "16 4 $MOE"; do
        read -r b x preset <<<"$g"
        pair mooncake "$b" "$x" scoring "$seed" "$preset"
      done
    done
    ;;
  synthetic)
    for seed in ${SYN_SEEDS-37 38 39 40}; do
      for g in "multi-turn 70 45 10000" "generated-shared-prefix 30 50" "zipf 40 65"; do
        read -r w l m req <<<"$g"
        if [[ -n ${req:-} ]]; then export REQUESTS=$req; else unset REQUESTS; fi
        pair "$w" 8 "$l" none "$seed" "$LLAMA"
        pair "$w" 8 "$m" none "$seed" "$MOE"
      done
    done
    ;;
  *)
    echo "usage: gate2.sh mooncake|synthetic" >&2
    exit 2
    ;;
esac
