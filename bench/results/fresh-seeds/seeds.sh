#!/usr/bin/env bash
# burst-split-2/seeds.sh with the runs chosen by PRESETS ("8b", "moe" or "8b moe", default both), so that the
# 8B runs of every seed come first. Same commands, same audit, same grep; one run at a time, niced.
# Usage: VERSIONS="before jk ig2" TREES=/tmp/fs- PRESETS=8b bench/results/fresh-seeds/seeds.sh OUT SEED...
set -euo pipefail
versions=${VERSIONS:-before jk ig2}
trees=${TREES:-/tmp/fs-}
presets=${PRESETS:-8b moe}
out=$1; shift
: > "$out"
runs=()
for p in $presets; do
  case $p in
    8b) runs+=("burst 8 28 llama-3.1-8b-h100-vllm" "burst-mooncake 8 28 llama-3.1-8b-h100-vllm") ;;
    moe) runs+=("burst 8 32 qwen3-30b-a3b-h100-vllm" "burst-mooncake 8 32 qwen3-30b-a3b-h100-vllm") ;;
    *) echo "PRESETS: 8b or moe, got $p" >&2; exit 2 ;;
  esac
done
for seed in "$@"; do
  for run in "${runs[@]}"; do
    set -- $run
    for v in $versions; do
      cmd="npx tsx bench/results/burst-tail/audit.ts $1 $2 $3 none $seed $4 llmd"
      echo "\$ ($v) $cmd" >> "$out"
      (cd "$trees$v" && SHOW=0 nice -n 10 $cmd 2>&1 | grep -E "^(prefix_aware|llmd):" | cut -c1-160) >> "$out"
    done
  done
done
