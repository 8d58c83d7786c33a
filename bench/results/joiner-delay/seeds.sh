#!/usr/bin/env bash
# Burst seeds outside both sets (burst-split-2's method, its seeds.sh): main, burst-split-2's rule with its guard
# (patch ../burst-split-2/burst-split-guard.patch on main) and this branch's joiners'-delay test. Each version is a
# `git archive` in /tmp/jd-VERSION (node_modules linked), so that the audit imports that version's src:
#   for v in main:main jd:joiner-delay; do mkdir -p /tmp/jd-${v%%:*} && git archive ${v#*:} | tar -x -C /tmp/jd-${v%%:*} && ln -s /work/main/node_modules /tmp/jd-${v%%:*}/node_modules; done
#   mkdir -p /tmp/jd-guard && git archive main | tar -x -C /tmp/jd-guard && (cd /tmp/jd-guard && patch -p1 < bench/results/burst-split-2/burst-split-guard.patch) && ln -s /work/main/node_modules /tmp/jd-guard/node_modules
# One run at a time, niced. Usage: bench/results/joiner-delay/seeds.sh OUT SEED...
set -euo pipefail
out=$1; shift
: > "$out"
for seed in "$@"; do
  for run in "burst 8 28 llama-3.1-8b-h100-vllm" "burst-mooncake 8 28 llama-3.1-8b-h100-vllm" \
             "burst 8 32 qwen3-30b-a3b-h100-vllm" "burst-mooncake 8 32 qwen3-30b-a3b-h100-vllm"; do
    set -- $run
    for v in main guard jd; do
      cmd="npx tsx bench/results/burst-tail/audit.ts $1 $2 $3 none $seed $4 llmd"
      echo "\$ ($v) $cmd" >> "$out"
      (cd /tmp/jd-$v && SHOW=0 nice -n 10 $cmd 2>&1 | grep -E "^(prefix_aware|llmd):" | cut -c1-160) >> "$out"
    done
  done
done
