#!/usr/bin/env bash
# text-count's hit against main's, request by request (hit-gauge.ts DUMP at tie 1 in both trees, then hit-diff.ts),
# the four Mooncake groups of the tuning set, seeds 1-2. MAIN and TC: detached worktrees of main and text-count with
# hit-gauge.ts copied in. Export MOONCAKE_TRACE first.
#   MAIN=/work/wt/tc-hit-main TC=/work/wt/tc-hit-tc bench/results/tc-hit/hit-diff.sh > bench/results/tc-hit/hit-diff-tuning.txt
set -euo pipefail
here=$PWD
tmp=$(mktemp -d)
for g in "8 2 qwen3-30b-a3b-h100-vllm" "16 4 qwen3-30b-a3b-h100-vllm" "8 2.5 llama-3.1-8b-h100-vllm" "16 5 llama-3.1-8b-h100-vllm"; do
  read -r b x preset <<<"$g"
  for seed in 1 2; do
    args=(mooncake "$b" "$x" tuning "$seed" "$preset")
    echo "== mooncake ${b}b x$x s$seed $preset"
    printf 'main:       '; (cd "$MAIN" && TIE=1 DUMP="$tmp/main.json" nice -n 10 npx tsx bench/results/tc-hit/hit-gauge.ts "${args[@]}")
    printf 'text-count: '; (cd "$TC" && TIE=1 DUMP="$tmp/tc.json" nice -n 10 npx tsx bench/results/tc-hit/hit-gauge.ts "${args[@]}")
    (cd "$here" && nice -n 10 npx tsx bench/results/tc-hit/hit-diff.ts "$tmp/main.json" "$tmp/tc.json" "${args[@]}")
  done
done
rm -r "$tmp"
