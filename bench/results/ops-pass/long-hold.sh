#!/bin/sh
# 4 long streams on pgw-flood-key (max_concurrent=4): is the key still full past KEY_SLOT_TTL (30 s)? poll every 5 s.
node bench/results/ops-pass/load.mjs /tmp/ops/long.jsonl 4 2 pgw-flood-key 6000 &
lp=$!
t0=$(date +%s)
sleep 1
while kill -0 $lp 2>/dev/null; do
  c=$(curl -s -m 20 -o /dev/null -w "%{http_code}" http://127.0.0.1:8787/v1/chat/completions -H 'authorization: Bearer pgw-flood-key' -H 'content-type: application/json' -d '{"model":"llama-3.1-8b-instruct","max_tokens":5,"messages":[{"role":"user","content":"probe"}]}')
  echo "$(( $(date +%s) - t0 ))s probe $c"
  sleep 5
done
wait $lp
node bench/results/ops-pass/summary.mjs /tmp/ops/long.jsonl 60
c=$(curl -s -m 20 -o /dev/null -w "%{http_code}" http://127.0.0.1:8787/v1/chat/completions -H 'authorization: Bearer pgw-flood-key' -H 'content-type: application/json' -d '{"model":"llama-3.1-8b-instruct","max_tokens":5,"messages":[{"role":"user","content":"probe"}]}')
echo "after the streams ended: probe $c"
