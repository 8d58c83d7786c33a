#!/bin/sh
# Probe 2: drain / undrain through the admin API under 20 streaming clients; then try to drain the whole pool.
S=/tmp/ops/drain-steps.log; : > $S
A='authorization: Bearer pgw-local-admin-token'
adm() { printf '%s %s -> ' "$1" "$2" >> $S; curl -s -m 10 -X POST -H "$A" -w ' [%{http_code} %{time_total}s]\n' "http://127.0.0.1:8787/admin/backends/$2/$1" >> $S; }
timeout 120 node bench/results/ops-pass/load.mjs /tmp/ops/drain.jsonl 20 55 pgw-local-dev-key 300 & L=$!; t0=$(date +%s)
log() { echo "$(( $(date +%s) - t0 ))s $*" >> $S; node bench/results/edge-pass-2/stats.mjs >> $S 2>&1; }
sleep 10; log "before"; adm drain emu-2; log "just after drain emu-2"
sleep 4; log "4 s after drain"; sleep 10; adm undrain emu-2; log "after undrain"
sleep 8; for b in emu-1 emu-2 emu-3 emu-4; do adm drain $b; done; log "after draining all four"
sleep 8; log "8 s later"; for b in emu-1 emu-2 emu-3 emu-4; do adm undrain $b; done; log "after undrain all"
wait $L; sleep 2; log "load ended"
