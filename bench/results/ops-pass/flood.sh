#!/bin/sh
# Probe 4: 10 streaming clients on pgw-local-dev-key (no in-flight limit) for 50 s; from 10 s to 35 s, 30 clients on
# pgw-flood-key (max_concurrent=4) flood. The flood's 429s and the other key's TTFT before / during / after.
timeout 120 node bench/results/ops-pass/load.mjs /tmp/ops/victim.jsonl 10 50 pgw-local-dev-key 300 & V=$!
sleep 10; timeout 90 node bench/results/ops-pass/load.mjs /tmp/ops/flood.jsonl 30 25 pgw-flood-key 300 & F=$!
sleep 12; node bench/results/edge-pass-2/stats.mjs > /tmp/ops/flood-mid.log
wait $V $F; sleep 2; node bench/results/edge-pass-2/stats.mjs >> /tmp/ops/flood-mid.log
