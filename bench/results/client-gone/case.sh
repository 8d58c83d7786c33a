#!/bin/bash
EMU=http://127.0.0.1:8697
curl -s -XPOST $EMU/_control/fault -d "$1" -H 'content-type: application/json' > /dev/null
sleep 1
t0=$(date +%s%N)
el() { echo $(( ($(date +%s%N) - t0) / 1000000 )); }
curl -sN --max-time 2 http://127.0.0.1:8797/v1/chat/completions -H 'authorization: Bearer live-client-key-one' -H 'content-type: application/json' \
  -d "{\"model\":\"llama\",\"max_tokens\":8,\"stream\":true$2,\"messages\":[{\"role\":\"user\",\"content\":\"hello $RANDOM\"}]}" > /tmp/cg-curl.out 2>&1
echo "$3: curl gave up at $(el) ms, got $(wc -c < /tmp/cg-curl.out) bytes"
prev=""
while [ $(el) -lt ${4:-14000} ]; do
  s=$(curl -s $EMU/_control/fault | python3 -c 'import json,sys; s=json.load(sys.stdin)["stats"]; print("held",s["held"],"abandoned",s["abandoned"])')
  e=$(ss -tn state established '( dport = :8697 )' | tail -n +2 | wc -l)
  cur="$s | conns to emu $e"
  [ "$cur" != "$prev" ] && echo " at $(el) ms: $cur"
  prev="$cur"
  sleep 0.2
done
curl -s -XDELETE $EMU/_control/fault > /dev/null
grep '"path":"/v1/chat' /tmp/cg-wrangler.log | tail -1 | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(" log:", {k:d.get(k) for k in ["failure","aborted","status","error","durationMs"]})'
