#!/usr/bin/env bash
# bench/results/shed/run.sh with the pool split into two RouterDO cells (ROUTER_CELLS=2: two backends each):
# scenario B of red-team.md "Overload: a slow fleet" (150 requests, 2.5/s for 60 s, 256 output tokens, onto four
# emulators of batch 4 and 9,000 KV tokens), through `wrangler dev`, MAX_INFLIGHT_PER_BACKEND=$BOUND, one arm per
# checkout (ARM names it): run it from this checkout and from a checkout of main (copy both scripts there, OUT= here).
#   BOUND=8 ARM=branch bash bench/results/shed-cells/run.sh     (from the project root; writes $OUT/*.json)
set -euo pipefail
BOUND=${BOUND:-8}
export BOUND CELLS=2 OUT=${OUT:-bench/results/shed-cells} EMU_PORTS="8771 8772 8773 8774" GW_PORT=8797
export ARMS="${ARM:-cells2}-bound$BOUND:$BOUND"
exec bash "$(dirname "$0")/../shed/run.sh"
