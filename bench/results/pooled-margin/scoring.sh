#!/usr/bin/env bash
# The pooled margin's scoring runs (prefix_aware only): Mooncake on both presets, 8 and 16 backends, the
# set's run (seed 1, no --seed flag) and seeds 3, 4, 5; and Mooncake MoE 8 with the scrape every 1000 ms,
# seeds 1, 3, 4, 5. Reports in bench/results/pooled-margin/scoring/.
#   MOONCAKE_TRACE=… bash bench/results/pooled-margin/scoring.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=bench/results/pooled-margin/scoring
run() { nice -n 10 npm run bench:sim -- --workload mooncake --set scoring --policies prefix_aware --out "$OUT" "$@"; }
# backends speed preset tag(for names)
for f in "8 2 qwen3-30b-a3b-h100-vllm" "16 4.1 qwen3-30b-a3b-h100-vllm" "8 2.45 llama-3.1-8b-h100-vllm" "16 5.1 llama-3.1-8b-h100-vllm"; do
  set -- $f
  b=$1 x=$2 p=$3
  suffix=$([[ $p == llama-3.1-8b-h100-vllm ]] && echo "" || echo "-$p")
  run --backends "$b" --speed "$x" --preset "$p"
  for s in 3 4 5; do
    run --backends "$b" --speed "$x" --preset "$p" --seed "$s" --name "mooncake-${b}b-x${x}-scoring-s${s}${suffix}"
  done
done
p=qwen3-30b-a3b-h100-vllm
run --backends 8 --speed 2 --preset "$p" --scrape-ms 1000 --name "mooncake-8b-x2-scrape1000-scoring-s1-$p"
for s in 3 4 5; do
  run --backends 8 --speed 2 --preset "$p" --scrape-ms 1000 --seed "$s" --name "mooncake-8b-x2-scrape1000-scoring-s${s}-$p"
done
