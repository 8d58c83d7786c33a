#!/usr/bin/env bash
# Gate 2 of moe8-resid (adapted from ../copy-charge/gate2.sh): data nobody tuned on. Synthetic seeds 15-17 of
# multi-turn, generated-shared-prefix and zipf at the race's loads (bench/sim-all.sh), both presets; Mooncake's
# scoring half with arrival seeds 45-52 (assigned to this branch), the four Mooncake groups at the race's speeds.
# Run from the tree whose policy is measured; OUT is an absolute folder.
#   main (e51452de), with Dynamo on Mooncake:  cd /work/wt/moe8-main2 && <this>/gate2.sh <this>/g2-main prefix_aware prefix_aware,dynamo
#   this branch:                               bench/results/moe8-resid/gate2.sh $PWD/bench/results/moe8-resid/g2-resid prefix_aware prefix_aware
# Usage: gate2.sh OUT SYNTHETIC_POLICIES MOONCAKE_POLICIES (export MOONCAKE_TRACE first). Other unused seeds:
# MC_SEEDS="…" SYN_SEEDS="…" (a later branch's gate 2, e.g. ../moe8-expect/gate2.sh).
set -euo pipefail
out=$1 synpol=$2 mcpol=$3
LLAMA=llama-3.1-8b-h100-vllm
MOE=qwen3-30b-a3b-h100-vllm
run() { nice -n 10 npx tsx sim/main.ts "$@" --kv-allocation incremental --out "$out" | tail -1; }
for seed in ${MC_SEEDS-45 46 47 48 49 50 51 52}; do
  for g in "8 2.5 $LLAMA" "16 5 $LLAMA" "8 2 $MOE" "16 4 $MOE"; do
    read -r b x preset <<<"$g"
    run --workload mooncake --backends "$b" --speed "$x" --set scoring --seed "$seed" --preset "$preset" \
      --policies "$mcpol" --name "mooncake-${b}b-x${x}-scoring-s${seed}-$preset"
  done
done
for seed in ${SYN_SEEDS-15 16 17}; do
  for g in "multi-turn 70 45 --requests 10000" "generated-shared-prefix 30 50" "zipf 40 65"; do
    read -r w l m extra <<<"$g"
    # shellcheck disable=SC2086
    run --workload "$w" --backends 8 $extra --rate "$l" --seed "$seed" --preset "$LLAMA" --policies "$synpol" \
      --name "$w-8b-r$l-unused-s$seed"
    # shellcheck disable=SC2086
    run --workload "$w" --backends 8 $extra --rate "$m" --seed "$seed" --preset "$MOE" --policies "$synpol" \
      --name "$w-8b-r$m-unused-s$seed-$MOE"
  done
done
