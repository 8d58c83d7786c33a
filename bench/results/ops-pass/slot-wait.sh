#!/bin/sh
# After restart-slots.sh: how long pgw-flood-key stays refused (one small request every STEP s, default 20, for at
# most 12 min).   slot-wait.sh [STEP]
step=${1:-20}
t0=$(date +%s)
for i in $(seq 1 $(( 720 / step ))); do
  c=$(curl -s -m 20 -o /dev/null -w "%{http_code}" http://127.0.0.1:8787/v1/chat/completions -H 'authorization: Bearer pgw-flood-key' -H 'content-type: application/json' -d '{"model":"llama-3.1-8b-instruct","max_tokens":5,"messages":[{"role":"user","content":"slot wait"}]}')
  echo "$(( $(date +%s) - t0 ))s $c"
  [ "$c" = 200 ] && break
  sleep "$step"
done
