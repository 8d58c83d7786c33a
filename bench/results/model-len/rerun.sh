#!/usr/bin/env bash
# The clairvoyant runs whose input the MoE preset's max_model_len (40,960 → 131,072) changes, one at a time (nice 10
# inside the scripts): every run that believes max_tokens under the `clients` model (half the requests send none,
# and those are believed to run to the context end), and the learned runs on Mooncake (their belief is capped by
# the same context end, and Mooncake has absent-max_tokens prompts past 40,960 − the mean output). capped / tight
# (every request sends a cap) and learned on the synthetic workloads (prompts ≤ 6.6k, mean output ≤ 512) keep
# their beliefs exactly (bench/results/model-len/README.md). Run from the repository root.
set -euo pipefail
export MOONCAKE_TRACE=${MOONCAKE_TRACE:-/work/shared/traces/mooncake_conversation.jsonl}
L=bench/results/model-len
KNOWS=learned ONLY=mooncake bench/clairvoyant-info.sh 2>&1 | tee "$L/log-learned-mooncake.txt"
KNOWS=learned+lagged ONLY=mooncake bench/clairvoyant-info.sh 2>&1 | tee "$L/log-learned-lagged-mooncake.txt"
KNOWS=learned SECOND=0.3:2 ONLY=mooncake bench/clairvoyant-info.sh 2>&1 | tee "$L/log-sc-learned-mooncake.txt"
KNOWS=learned+lagged SECOND=0.3:2 ONLY=mooncake bench/clairvoyant-info.sh 2>&1 | tee "$L/log-sc-learned-lagged-mooncake.txt"
# kv-growth's max-tokens reference under incremental allocation (bench/results/kv-growth/run.sh's last loop).
nice -n 10 npx tsx sim/clairvoyant-main.ts --workload mooncake --backends 8 --speed 2 --set scoring \
  --preset qwen3-30b-a3b-h100-vllm --balance-factor 1.25 --objectives ttft --knows max-tokens \
  --kv-allocation incremental --out bench/results/kv-growth/clairvoyant 2>&1 | tee "$L/log-kv-growth-maxtok.txt"
KNOWS=max-tokens bench/clairvoyant-info.sh 2>&1 | tee "$L/log-maxtok.txt"
KNOWS=max-tokens+lagged bench/clairvoyant-info.sh 2>&1 | tee "$L/log-maxtok-lagged.txt"
