#!/usr/bin/env bash
# The 8B preset's clairvoyant runs with max_tokens beliefs (the input maxModelLen feeds), on main's code and on
# this branch's, one at a time: the reports must be the same but for wall times. Also a bench:sim MoE run (its
# report's fleet.engine must not gain a field).
#   bench/results/model-len/check-8b.sh MAIN_CHECKOUT     (run from this checkout's root)
set -euo pipefail
MAIN=${1:?main checkout}
export MOONCAKE_TRACE=${MOONCAKE_TRACE:-/work/shared/traces/mooncake_conversation.jsonl}
HERE=$(pwd)
for side in main branch; do
  dir=$HERE; [[ $side == main ]] && dir=$MAIN
  out=$HERE/bench/results/model-len/check-$side
  (cd "$dir"
   for k in max-tokens max-tokens+lagged learned; do
     nice -n 10 npx tsx sim/clairvoyant-main.ts --workload zipf --backends 8 --rate 65 --seed 3 --set scoring \
       --balance-factor 1.25 --objectives ttft --knows "$k" --out "$out" 2>/dev/null
     nice -n 10 npx tsx sim/clairvoyant-main.ts --workload mooncake --backends 8 --speed 2.45 --set scoring \
       --balance-factor 1.25 --objectives ttft --knows "$k" --out "$out" 2>/dev/null
   done
   nice -n 10 npm run --silent bench:sim -- --workload mooncake --backends 8 --speed 2 --set scoring \
     --preset qwen3-30b-a3b-h100-vllm --out "$out" >/dev/null)
done
