#!/usr/bin/env bash
# Regenerates the simulator reports that bench/results/SUMMARY.md cites, one
# run at a time (nice 10: the machine is shared), on both engine presets:
#
#   npm run bench:sim:all -- sweeps    the load sweeps (least_outstanding, tuning set) behind each load below
#   npm run bench:sim:all -- tuning    every tuning-set workload: seeds 1-2 (Mooncake: its first half, seeds 1-2)
#   npm run bench:sim:all -- scoring   every workload on the scoring set: seeds 3-5 (Mooncake: its second half,
#                                      seeds 3-5; a trace's seed draws the clients' max_tokens and the routers'
#                                      randomness. Until after-resweep the race ran each half once, on seed 1,
#                                      and one such run moved Mooncake MoE's p99 by up to ±10% and its hit by
#                                      5 points: SUMMARY.md, "Mooncake over three seeds")
#   npm run bench:sim:all -- all       the three, in that order
#   npm run bench:sim:all -- scoring after-issue-12
#                                      the same runs, reports under bench/results/after-issue-12/:
#                                      a later policy's runs beside the baseline, not over it
#   POLICIES=prefix_aware npm run bench:sim:all -- tuning after-issue-12/variant
#                                      one policy only (a variant on the tuning set; its peers are unchanged)
#   SCRAPE_MS=1000 POLICIES=prefix_aware npm run bench:sim:all -- tuning engine-memory-base-tuning
#                                      the tuning/scoring runs with the gateway's scrape of each engine's
#                                      /metrics every 1000 ms (--scrape-ms; no second client): our policies
#                                      read lagged engine readings of the fleet that holds only our traffic
#                                      (the peers read live engine state with or without it); 0 or unset: off
#   NOTICE_DELAY_MS=20:0.5:20 POLICIES=prefix_aware npm run bench:sim:all -- scoring ftd-20
#                                      our router hears each first token and completion 20 ms (lognormal,
#                                      log-σ 0.5) after the engine, a completion carried by a route call
#                                      within 20 ms (REPORT_CARRY_MS) or sent alone; peers at once
#                                      (sim/notice-delay.ts); unset: at the engine's instant
#   KV_ALLOCATION=reserve npm run bench:sim:all -- scoring reserve-scoring
#                                      the same runs with the engines reserving prompt + output at admission
#                                      (--kv-allocation reserve: the default before after-incremental; no
#                                      preemption). Default: incremental, vLLM V1's step-by-step allocation
#                                      with preemption (sim/model/engine-config.ts DEFAULT_KV_ALLOCATION)
#   npm run bench:sim:all -- clairvoyant
#                                      the scoring runs of the clairvoyant greedy reference only (not a policy:
#                                      sim/clairvoyant.ts; also within the bounded-load cap at the default
#                                      c = 1.25), reports under bench/results/clairvoyant/ unless a
#                                      FOLDER is given; table: npx tsx bench/clairvoyant-table.ts
#   ONLY="zipf mooncake" npm run bench:sim:all -- scoring
#                                      those workloads only (names as in WORKLOADS below)
#   npm run bench:sim:all -- signals [FOLDER]
#                                      engine signals (issue #12 item 2): every scoring run again with a
#                                      second client around the gateway, pinned or spread or none, each
#                                      with the scrape off and every 1000 ms; reports under
#                                      bench/results/engine-signals/ unless FOLDER is given; tables:
#                                      npx tsx bench/sim-tables.ts signals [FOLDER]
#
# The load of a workload on a preset is the first swept load whose
# least_outstanding TTFT p99 is at least 2x its p99 at the sweep's lowest
# load (each sweep report prints it); each grid is the coarse one
# (0.5..100 req/s; Mooncake speeds) refined with three loads between the
# last load under 2x and the first at or above it. The burst workloads are
# in no tuning set: they are swept on seed 1, which is in neither set.
# Every command writes the report its own flags name (the preset, set and
# seed are in the name), so nothing here overwrites another report.
# Set MOONCAKE_TRACE when the trace is not at ../shared/traces/.
set -euo pipefail
cd "$(dirname "$0")/.."

# An optional folder under bench/results/ for the tuning and scoring reports (the sweeps choose the
# loads once and stay where they are); its name is in each report's command, so the report still
# says how to reproduce itself.
RUN_DIR=${2:-}
# The engine-signals runs are not the scoring race (other traffic shares the fleet): a folder of their own.
if [[ "${1:-}" == signals && -z "$RUN_DIR" ]]; then RUN_DIR=engine-signals; fi
if [[ "${1:-}" == clairvoyant && -z "$RUN_DIR" ]]; then RUN_DIR=clairvoyant; fi
if [[ -n "$RUN_DIR" && (! "$RUN_DIR" =~ ^[A-Za-z0-9][A-Za-z0-9._/-]*$ || "$RUN_DIR" == *..*) ]]; then
  echo "bench/sim-all.sh: the report folder must be a path under bench/results/, got '$RUN_DIR'" >&2
  exit 2
fi
RUN_FLAGS=()
if [[ -n "$RUN_DIR" ]]; then RUN_FLAGS=(--out "bench/results/$RUN_DIR"); fi
if [[ -n "${POLICIES:-}" ]]; then RUN_FLAGS+=(--policies "$POLICIES"); fi
# SCRAPE_MS applies to the tuning and scoring runs only: the signals runs choose their own intervals.
if [[ -n "${SCRAPE_MS:-}" && "${1:-}" != signals ]]; then RUN_FLAGS+=(--scrape-ms "$SCRAPE_MS"); fi
# NOTICE_DELAY_MS=MEAN[:SIGMA[:CARRY]][,nofirst]: our router hears first tokens and completions that late
# (sim/notice-delay.ts, --notice-delay-ms; the peers hear them at once); unset or 0: at the engine's instant.
if [[ -n "${NOTICE_DELAY_MS:-}" ]]; then RUN_FLAGS+=(--notice-delay-ms "$NOTICE_DELAY_MS"); fi
# KV_ALLOCATION, unset or incremental: the engines take KV step by step and preempt as vLLM V1 does
# (sim/model/scheduler.ts), the engine model's default; reserve: prompt + output at admission, the default
# before. Always passed on, so every report's command names its allocation. The loads below are those
# the sweeps chose under incremental (bench/results/sweeps-incremental/); reserve's sweeps, which chose the
# loads of every report before after-resweep, stay at the top of bench/results/ (SUMMARY.md, "Loads").
KV_ALLOCATION=${KV_ALLOCATION:-incremental}
SWEEP_DIR=bench/results
if [[ "$KV_ALLOCATION" != reserve ]]; then SWEEP_DIR=bench/results/sweeps-$KV_ALLOCATION; fi
RUN_FLAGS+=(--kv-allocation "$KV_ALLOCATION")

LLAMA=llama-3.1-8b-h100-vllm
MOE=qwen3-30b-a3b-h100-vllm

# name|backends|extra flags|sweep grid (llama)|sweep grid (MoE)|load (llama)|load (MoE)
# Synthetic loads are req/s (--rate), Mooncake's are replay speeds (--speed).
WORKLOADS=(
  "generated-shared-prefix|8||0.5,10,20,25,30,35,40,60,80,100|0.5,10,20,40,45,50,55,60,80,100|30|50"
  "multi-turn|8|--requests 10000|0.5,10,20,40,60,65,70,75,80,100|0.5,10,20,40,45,50,55,60,80,100|70|45"
  "zipf|8||0.5,10,20,25,30,35,40,60,80,100|0.5,10,20,40,60,65,70,75,80,100|40|65"
  "no-shared-prefix|8||0.5,10,12.5,15,17.5,20,40,60,80,100|0.5,10,20,25,30,35,40,60,80,100|15|25"
  "burst|8||1,8,16,20,24,28,32,48,64,96|1,8,16,20,24,28,32,48,64,96|28|32"
  "burst-mooncake|8||1,8,16,20,24,28,32,48,64,96|1,8,16,20,24,28,32,48,64,96|28|32"
  "mooncake|8||0.25,1,2,2.2,2.4,2.45,2.5,2.55,2.6,2.8,3|0.25,1,1.25,1.5,1.75,2,2.2,2.4,2.6,2.8,3|2.5|2"
  "mooncake|16||0.5,2,4,4.4,4.8,4.9,5,5.1,5.2,5.6,6|0.5,2,2.5,3,3.5,4,4.4,4.8,5.2,5.6,6|5|4"
)
SCORED_ONLY="burst burst-mooncake"
TRACES="mooncake"

sim() {
  echo "+ bench:sim $* ${RUN_FLAGS[*]}" >&2
  nice -n 10 npx tsx sim/main.ts "$@" "${RUN_FLAGS[@]}"
}
sweep() {
  echo "+ bench:sweep $* --kv-allocation $KV_ALLOCATION" >&2
  mkdir -p "$SWEEP_DIR"
  nice -n 10 npx tsx sim/sweep.ts "$@" --kv-allocation "$KV_ALLOCATION" >/dev/null
}
has() { [[ " $1 " == *" $2 "* ]]; }

# each_run CALLBACK: calls CALLBACK name backends "extra flags" grid load preset tag, per workload and preset
each_run() {
  local line name backends extra grid_l grid_m load_l load_m
  for line in "${WORKLOADS[@]}"; do
    IFS='|' read -r name backends extra grid_l grid_m load_l load_m <<<"$line"
    if [[ -n "${ONLY:-}" ]] && ! has "$ONLY" "$name"; then continue; fi
    "$1" "$name" "$backends" "$extra" "$grid_l" "$load_l" "$LLAMA" ""
    "$1" "$name" "$backends" "$extra" "$grid_m" "$load_m" "$MOE" "-$MOE"
  done
}

# shellcheck disable=SC2086 # $extra is a list of flags
sweep_one() {
  local name=$1 backends=$2 extra=$3 grid=$4 preset=$6 tag=$7
  if has "$SCORED_ONLY" "$name"; then
    sweep --workload "$name" --backends "$backends" $extra --seed 1 --loads "$grid" --preset "$preset" \
      --out "$SWEEP_DIR/sweep-$name-${backends}b-seed1$tag.md"
  else
    sweep --workload "$name" --backends "$backends" $extra --set tuning --loads "$grid" --preset "$preset" \
      --out "$SWEEP_DIR/sweep-$name-${backends}b-tuning$tag.md"
  fi
}

load_flag() { if has "$TRACES" "$1"; then echo "--speed $2"; else echo "--rate $2"; fi; }

# shellcheck disable=SC2046,SC2086
tuning_one() {
  local name=$1 backends=$2 extra=$3 load=$5 preset=$6
  has "$SCORED_ONLY" "$name" && return 0
  for seed in 1 2; do
    sim --workload "$name" --backends "$backends" $extra $(load_flag "$name" "$load") --set tuning --seed $seed \
      --preset "$preset"
  done
}

# shellcheck disable=SC2046,SC2086
scoring_one() {
  local name=$1 backends=$2 extra=$3 load=$5 preset=$6
  for seed in 3 4 5; do
    sim --workload "$name" --backends "$backends" $extra $(load_flag "$name" "$load") --set scoring --seed $seed \
      --preset "$preset"
  done
}

# shellcheck disable=SC2046,SC2086
clairvoyant_one() {
  local name=$1 backends=$2 extra=$3 load=$5 preset=$6 seed
  local seeds=(3 4 5)
  has "$TRACES" "$name" && seeds=("")
  for seed in "${seeds[@]}"; do
    echo "+ clairvoyant $name $backends $preset ${seed:+seed $seed}" >&2
    nice -n 10 npx tsx sim/clairvoyant-main.ts --workload "$name" --backends "$backends" $extra \
      $(load_flag "$name" "$load") --set scoring ${seed:+--seed $seed} --preset "$preset" --balance-factor 1.25 \
      --kv-allocation "$KV_ALLOCATION" --out "bench/results/$RUN_DIR"
  done
}

# The second client of the engine-signals runs (sim/second-client.ts) sends 30% of the requests
# straight to the engines: "pinned" to the first quarter of the fleet (a client bound to part of it: the
# load a router that cannot see it piles onto), "spread" over all of them, or there is none (the scrape
# must then change nothing: the engines hold only our own requests). The scrape interval is the one
# chosen on the tuning set (bench/results/engine-signals.md); 0 is off.
# With the scrape off, least_outstanding and the peers run beside prefix_aware as its yardstick (the three
# static policies add nothing here). With it on, only prefix_aware is told anything new: the peers read
# live engine state either way, so their figures are the scrape-off run's (sim-tables.ts checks that
# least_outstanding, which reads no scrape, is the same in both).
SIGNALS_SHARE=0.3
SIGNALS_SCRAPE_MS=1000
SIGNALS_OFF_POLICIES=prefix_aware,least_outstanding,sglang,llmd,dynamo,sagemaker
SIGNALS_ON_POLICIES=prefix_aware,least_outstanding

# shellcheck disable=SC2046,SC2086
signals_one() {
  local name=$1 backends=$2 extra=$3 load=$5 preset=$6 second scrape seeds=(3 4 5)
  has "$TRACES" "$name" && seeds=("")
  for second in "$SIGNALS_SHARE:$((backends / 4))" "$SIGNALS_SHARE" none; do
    local second_flags=(--second-client "$second")
    [[ "$second" == none ]] && second_flags=()
    for scrape in 0 "$SIGNALS_SCRAPE_MS"; do
      local policies=$SIGNALS_OFF_POLICIES
      [[ "$scrape" != 0 ]] && policies=$SIGNALS_ON_POLICIES
      for seed in "${seeds[@]}"; do
        sim --workload "$name" --backends "$backends" $extra $(load_flag "$name" "$load") --set scoring \
          ${seed:+--seed $seed} --preset "$preset" "${second_flags[@]}" --scrape-ms "$scrape" \
          --policies "${POLICIES:-$policies}"
      done
    done
  done
}

case "${1:-}" in
  sweeps)
    if [[ -n "$RUN_DIR" ]]; then
      echo "bench/sim-all.sh: the sweeps choose the loads once; they take no report folder" >&2
      exit 2
    fi
    each_run sweep_one
    ;;
  tuning) each_run tuning_one ;;
  scoring) each_run scoring_one ;;
  signals) each_run signals_one ;;
  clairvoyant) each_run clairvoyant_one ;;
  all)
    if [[ -n "$RUN_DIR" ]]; then
      echo "bench/sim-all.sh: 'all' re-runs the sweeps, which take no report folder" >&2
      exit 2
    fi
    each_run sweep_one
    each_run tuning_one
    each_run scoring_one
    ;;
  *)
    echo "usage: bench/sim-all.sh sweeps|tuning|scoring|signals|clairvoyant|all [REPORT_FOLDER]" >&2
    exit 2
    ;;
esac
