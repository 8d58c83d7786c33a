#!/bin/sh
# What a wrangler dev restart (the local stand-in for a crashed isolate) leaves behind: pgw-flood-key (max_concurrent=4)
# holds 4 streams, emu-2 is drained; wrangler restarts; then the key's next requests and the drain's state.
A='authorization: Bearer pgw-local-admin-token'
curl -s -m 5 -X POST -H "$A" -o /dev/null -w "drain emu-2 [%{http_code}]\n" http://127.0.0.1:8787/admin/backends/emu-2/drain
timeout 60 node bench/results/ops-pass/load.mjs /tmp/ops/slots.jsonl 4 4 pgw-flood-key 2000 &
sleep 2; bench/results/ops-pass/restart-wrangler.sh; wait
node bench/results/ops-pass/summary.mjs /tmp/ops/slots.jsonl 60
for i in 1 2 3; do curl -s -m 20 -o /dev/null -w "after restart, flood key request $i: %{http_code} retry-after=%header{retry-after}\n" http://127.0.0.1:8787/v1/chat/completions -H 'authorization: Bearer pgw-flood-key' -H 'content-type: application/json' -d '{"model":"llama-3.1-8b-instruct","max_tokens":5,"messages":[{"role":"user","content":"after restart"}]}'; done
curl -s -m 5 -H "$A" http://127.0.0.1:8787/admin/backends | head -c 700; echo
curl -s -m 5 -X POST -H "$A" -o /dev/null -w "undrain emu-2 [%{http_code}]\n" http://127.0.0.1:8787/admin/backends/emu-2/undrain
