#!/bin/sh
# Probe 1: the fleet changes under 20 streaming clients (wrangler dev on --env-file /tmp/ops/vars reloads on change).
# Each step rewrites the env file; times are logged to /tmp/ops/fleet-steps.log (seconds since load start).
V=bench/results/ops-pass/vars.mjs; S=/tmp/ops/fleet-steps.log; : > $S
node $V /tmp/ops/vars 8101,8102,8103,8104; sleep 8
timeout 150 node bench/results/ops-pass/load.mjs /tmp/ops/fleet.jsonl 20 110 pgw-local-dev-key 300 &
L=$!; t0=$(date +%s)
step() { sleep "$1"; shift; echo "$(( $(date +%s) - t0 ))s $*" >> $S; node bench/results/edge-pass-2/stats.mjs >> $S 2>&1; }
step 12 "before any change"
node $V /tmp/ops/vars 8101,8102,8103,8104,8105; step 0 "ADD emu-5"
step 14 "after add"
node $V /tmp/ops/vars 8101,8102,8103,8105; step 0 "REMOVE emu-4"
step 14 "after remove"
node $V /tmp/ops/vars 8101,8102,emu-3@8104,8105; step 0 "emu-3 URL -> :8104"
step 14 "after url change"
node $V /tmp/ops/vars 8101:w3,8102,emu-3@8104,8105; step 0 "emu-1 weight 3"
step 14 "after weight"
node $V /tmp/ops/vars 8101:w3,8102,emu-3@8104,8105 ROUTING_POLICY=least_outstanding PREFIX_TOKENS=4096; step 0 "policy least_outstanding, PREFIX_TOKENS 4096"
wait $L
step 3 "after load ended"
