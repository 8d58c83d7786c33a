#!/usr/bin/env bash
# The kv-growth runs: every MoE scoring run below again with --kv-allocation incremental (all policies: the
# engine changes), one at a time, then the clairvoyant reference on Mooncake MoE 8 (exact and --knows
# max-tokens). Run from the repository root. Table: npx tsx bench/kv-allocation-table.ts after-issue-12 kv-growth
set -euo pipefail
export MOONCAKE_TRACE=${MOONCAKE_TRACE:-/work/shared/traces/mooncake_conversation.jsonl}
MOE=qwen3-30b-a3b-h100-vllm
sim() { nice -n 10 npm run --silent bench:sim -- "$@" --set scoring --preset "$MOE" --kv-allocation incremental --out bench/results/kv-growth | tail -1; }
sim --workload mooncake --backends 8 --speed 2
sim --workload mooncake --backends 16 --speed 4.1
for s in 3 4 5; do
  sim --workload multi-turn --backends 8 --requests 10000 --rate 40 --seed "$s"
  sim --workload zipf --backends 8 --rate 65 --seed "$s"
done
sim --workload generated-shared-prefix --backends 8 --rate 45 --seed 3
sim --workload no-shared-prefix --backends 8 --rate 25 --seed 3
# The 8B preset's Mooncake runs (the default preset: no --preset).
for a in "--backends 8 --speed 2.45" "--backends 16 --speed 5.1"; do
  # shellcheck disable=SC2086
  nice -n 10 npm run --silent bench:sim -- --workload mooncake $a --set scoring --kv-allocation incremental \
    --out bench/results/kv-growth | tail -1
done
for k in exact max-tokens; do
  nice -n 10 npx tsx sim/clairvoyant-main.ts --workload mooncake --backends 8 --speed 2 --set scoring --preset "$MOE" \
    --balance-factor 1.25 --objectives ttft --knows "$k" --kv-allocation incremental \
    --out bench/results/kv-growth/clairvoyant | tail -1
done
