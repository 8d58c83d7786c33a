#!/bin/sh
# Probe 1 under wrangler dev: the fleet changes (vars) mid-traffic; wrangler dev must be restarted to see it.
V=bench/results/ops-pass/vars.mjs; S=/tmp/ops/fr-steps.log; : > $S
node $V .dev.vars 8101,8102,8103,8104; bench/results/ops-pass/restart-wrangler.sh
timeout 120 node bench/results/ops-pass/load.mjs /tmp/ops/fr.jsonl 20 60 pgw-local-dev-key 300 & L=$!; t0=$(date +%s)
log() { echo "$(( $(date +%s) - t0 ))s $*" >> $S; node bench/results/edge-pass-2/stats.mjs >> $S 2>&1; curl -s -m 3 http://127.0.0.1:8787/healthz -H 'authorization: Bearer pgw-local-admin-token' | grep -o '"fleetVersion":"[^"]*"' >> $S; }
sleep 15; log "before"
node $V .dev.vars 8101,8102,8103,8104,8105; echo "$(( $(date +%s) - t0 ))s restart: ADD emu-5" >> $S; bench/results/ops-pass/restart-wrangler.sh >> $S
sleep 1; log "after add"; sleep 13
node $V .dev.vars 8101:w3,8102,emu-3@8104,8105 PREFIX_TOKENS=4096; echo "$(( $(date +%s) - t0 ))s restart: REMOVE emu-4, emu-3 -> :8104, emu-1 weight 3, PREFIX_TOKENS 4096" >> $S; bench/results/ops-pass/restart-wrangler.sh >> $S
sleep 1; log "after change 2"
wait $L; sleep 2; log "load ended"
