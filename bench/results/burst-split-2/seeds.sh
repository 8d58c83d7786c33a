#!/usr/bin/env bash
# Burst seeds outside both sets, every version: main, the rule (burst-tail's patch), the rule with the guard.
# Each version is a `git archive` of its commit in /tmp/bs2-VERSION (node_modules linked), so that the audit
# imports that version's src. One run at a time, niced. Usage: bench/results/burst-split-2/seeds.sh OUT SEED...
# VERSIONS (default "main rule guard") and TREES (default /tmp/bs2-) name other versions' trees (joiner-delay/);
# PRESETS ("8b", "moe" or the default "8b moe") which runs of each seed, e.g. the 8B ones first (fresh-seeds/).
set -euo pipefail
versions=${VERSIONS:-main rule guard}
trees=${TREES:-/tmp/bs2-}
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
