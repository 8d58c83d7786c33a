#!/usr/bin/env bash
# The clairvoyant reference with its knowledge cut down (sim/clairvoyant-knowledge.ts), on the MoE scoring
# runs where it leads: multi-turn, Zipf, no-shared-prefix, gsp (seeds 3-5) and Mooncake 8 backends, with
# bench/sim-all.sh's clairvoyant flags (uncapped and --balance-factor 1.25), one run at a time (nice 10).
#
#   KNOWS=max-tokens bench/clairvoyant-info.sh            # or lagged, max-tokens+lagged
#   KNOWS=max-tokens MAX_TOKENS=tight SEEDS=3 bench/clairvoyant-info.sh
#   KNOWS=lagged SECOND=0.3:2 ONLY="multi-turn zipf mooncake" bench/clairvoyant-info.sh   # other traffic
#
# KV_ALLOCATION=reserve: the engines (and the reference's copies) reserve prompt + output at admission, the
# default before; unset: incremental, vLLM V1's allocation (the reports in clairvoyant-info/ predate that
# default and ran reserve).
# Reports under bench/results/clairvoyant-info/; table: npx tsx bench/clairvoyant-table.ts info
set -euo pipefail
cd "$(dirname "$0")/.."
KNOWS=${KNOWS:?set KNOWS}
SEEDS=${SEEDS:-3 4 5}
MT=(--kv-allocation "${KV_ALLOCATION:-incremental}")
if [[ -n "${MAX_TOKENS:-}" ]]; then MT=(--max-tokens "$MAX_TOKENS"); fi
# SECOND=SHARE[:K]: other traffic straight to the engines (bench:sim --second-client); ONLY: workloads to run.
if [[ -n "${SECOND:-}" ]]; then MT+=(--second-client "$SECOND"); fi
has() { [[ -z "${ONLY:-}" || " $ONLY " == *" $1 "* ]]; }
MOE=qwen3-30b-a3b-h100-vllm
OUT=bench/results/clairvoyant-info
export MOONCAKE_TRACE=${MOONCAKE_TRACE:-/work/shared/traces/mooncake_conversation.jsonl}
run() {
  echo "+ clairvoyant --knows $KNOWS ${MT[*]} $*" >&2
  nice -n 10 npx tsx sim/clairvoyant-main.ts "$@" --set scoring --preset "$MOE" --balance-factor 1.25 \
    --objectives ttft --knows "$KNOWS" "${MT[@]}" --out "$OUT"
}
for seed in $SEEDS; do
  if has multi-turn; then run --workload multi-turn --backends 8 --requests 10000 --rate 40 --seed "$seed"; fi
  if has zipf; then run --workload zipf --backends 8 --rate 65 --seed "$seed"; fi
  if has no-shared-prefix; then run --workload no-shared-prefix --backends 8 --rate 25 --seed "$seed"; fi
  if has generated-shared-prefix; then run --workload generated-shared-prefix --backends 8 --rate 45 --seed "$seed"; fi
done
if [[ "${MOONCAKE:-1}" == 1 ]] && has mooncake; then run --workload mooncake --backends 8 --speed 2; fi
