#!/bin/sh
# Probe 3 under 20 streaming clients: emu-2 restarted (down 5 s), emu-3 replaced by a 10x slower one, then the whole
# fleet down for 20 s (each emulator's /_control/down) and back. Emulator pids in /tmp/ops/emu.pids (one a line, 8101..).
S=/tmp/ops/outage-steps.log; : > $S
down() { curl -s -m 3 -X POST -H 'content-type: application/json' -d "{\"ms\":$2}" -o /dev/null -w "down :$1 $2 ms [%{http_code}]\n" "http://127.0.0.1:$1/_control/down" >> $S; }
timeout 150 node bench/results/ops-pass/load.mjs /tmp/ops/outage.jsonl 20 95 pgw-local-dev-key 300 & L=$!; t0=$(date +%s)
log() { echo "$(( $(date +%s) - t0 ))s $*" >> $S; node bench/results/edge-pass-2/stats.mjs >> $S 2>&1; }
sleep 10; log "before"; down 8102 5000; sleep 3; log "emu-2 down"; sleep 7; log "emu-2 back 5 s ago"
sleep 3; p=$(sed -n 3p /tmp/ops/emu.pids); kill -- -"$p"; sleep 1
bench/results/ops-pass/emu.sh 8103 --speed 0.1 > /tmp/ops/emu3slow.pid; sed -i "3s/.*/$(cat /tmp/ops/emu3slow.pid)/" /tmp/ops/emu.pids
log "emu-3 restarted at speed x0.1"; sleep 12; log "12 s after slow emu-3"
for p in 8101 8102 8103 8104; do down $p 20000; done; log "fleet down (20 s)"
for i in 1 2 3 4; do sleep 5; log "fleet down +$((i*5)) s"; done
for i in 1 2 3 4; do sleep 5; log "fleet back +$((i*5)) s"; done
wait $L; sleep 3; log "load ended"
