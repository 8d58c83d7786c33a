#!/usr/bin/env bash
# Gate 2 of hit-8b: data neither set uses. Mooncake 8B, the scoring half replayed with arrival seeds 9-10, on 8
# backends x2.5 and 16 backends x5; Zipf, gsp and multi-turn (10,000 requests) on seed 9 (the sets use 1-5),
# both presets, at the race's loads. Run from the work tree whose src/ is measured:
#   branch: (cd /work/wt/hit-8b && bench/results/hit-8b/gate2.sh hit-8b/gate2)
#   main:   (cd <a detached work tree of main> && /work/wt/hit-8b/bench/results/hit-8b/gate2.sh hit-8b/gate2-main /work/wt/hit-8b)
# (OUT is under bench/results/ of the second argument's tree, default this one.)
set -euo pipefail
out=$1
root=${2:-.}
L=llama-3.1-8b-h100-vllm
MOE=qwen3-30b-a3b-h100-vllm
run() { nice -n 10 npx tsx sim/main.ts "$@" --policies prefix_aware --kv-allocation incremental --out "$root/bench/results/$out" | tail -1; }
for seed in 9 10; do
  for bx in "8 2.5" "16 5"; do
    read -r b x <<<"$bx"
    run --workload mooncake --backends "$b" --speed "$x" --set scoring --seed "$seed" --preset "$L" \
      --name "mooncake-${b}b-x${x}-scoring-s${seed}"
  done
done
for wl in "zipf 40 65" "generated-shared-prefix 30 50" "multi-turn 70 45"; do
  read -r name rl rm <<<"$wl"
  extra=()
  if [[ $name == multi-turn ]]; then extra=(--requests 10000); fi
  run --workload "$name" --backends 8 "${extra[@]}" --rate "$rl" --seed 9 --preset "$L" --name "$name-8b-r$rl-s9"
  run --workload "$name" --backends 8 "${extra[@]}" --rate "$rm" --seed 9 --preset "$MOE" --name "$name-8b-r$rm-s9-$MOE"
done
