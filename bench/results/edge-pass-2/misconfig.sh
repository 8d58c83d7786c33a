#!/usr/bin/env bash
# Each case: wrangler dev on 127.0.0.1:8788 with one broken setting, then /healthz (no key), /healthz (admin) and
# one chat request; prints status and the first 300 bytes of each. Emulators must run on :8101 (npm run dev -- --no-wrangler).
set -u
cd "$(dirname "$0")/../../.."
E='{"id":"emu-1","url":"http://127.0.0.1:8101","models":["llama-3.1-8b-instruct"],"apiKey":"emu-key","kvCacheTokens":262144}'
b(){ printf '%s' "$1" | sed "s#URL#http://127.0.0.1:8101#"; }
run(){ name=$1; backends=$2; shift 2
  f=/tmp/ep2/mc-$name.vars
  { [ "$backends" != "-" ] && printf "BACKENDS='%s'\n" "$backends"; printf 'GATEWAY_API_KEYS=pgw-local-dev-key\nADMIN_TOKEN=pgw-local-admin-token\n'; for kv in "$@"; do echo "$kv"; done; } > $f
  [ "${DROPKEYS:-}" = 1 ] && sed -i '/GATEWAY_API_KEYS/d' $f
  PATH=$PWD/node_modules/.bin:$PATH setsid node_modules/.bin/wrangler dev --port 8788 --ip 127.0.0.1 --env-file $f > /tmp/ep2/mc.log 2>&1 &
  pid=$!
  for i in $(seq 1 40); do grep -q "Ready on" /tmp/ep2/mc.log && break; sleep 1; done
  echo "=== $name: $(grep -v '^BACKENDS\|^GATEWAY\|^ADMIN' $f | tr '\n' ' ') ${backends:0:160}"
  for h in "" "Authorization: Bearer pgw-local-admin-token"; do
    curl -sS -m 10 -o /tmp/ep2/mc.body -w '  healthz %{http_code}: ' ${h:+-H "$h"} http://127.0.0.1:8788/healthz; head -c 300 /tmp/ep2/mc.body; echo; done
  curl -sS -m 10 -o /tmp/ep2/mc.body -w '  chat %{http_code}: ' http://127.0.0.1:8788/v1/chat/completions -H 'Authorization: Bearer pgw-local-dev-key' -H 'content-type: application/json' \
    -d '{"model":"llama-3.1-8b-instruct","max_tokens":2,"messages":[{"role":"user","content":"hi"}]}'; head -c 300 /tmp/ep2/mc.body; echo
  grep -E 'stack|Error' /tmp/ep2/mc.log | grep -v 'Request.cf\|ENOTFOUND\|getaddrinfo' | head -3 | cut -c1-200
  kill -- -$pid 2>/dev/null; wait $pid 2>/dev/null; sleep 1
}
case "${1:-all}" in
all)
run notjson 'not json'
run empty '[]'
run object "$E"
run nourl '[{"id":"emu-1","models":["llama-3.1-8b-instruct"],"kvCacheTokens":262144}]'
run dupid "[$E,$E]"
run v1path '[{"id":"emu-1","url":"http://127.0.0.1:8101/v1","models":["llama-3.1-8b-instruct"],"apiKey":"emu-key","kvCacheTokens":262144}]'
run slash '[{"id":"emu-1","url":"http://127.0.0.1:8101/","models":["llama-3.1-8b-instruct"],"apiKey":"emu-key","kvCacheTokens":262144}]'
run query '[{"id":"emu-1","url":"http://127.0.0.1:8101?x=1","models":["llama-3.1-8b-instruct"],"apiKey":"emu-key","kvCacheTokens":262144}]'
run fragment '[{"id":"emu-1","url":"http://127.0.0.1:8101#top","models":["llama-3.1-8b-instruct"],"apiKey":"emu-key","kvCacheTokens":262144}]'
run ftp '[{"id":"emu-1","url":"ftp://127.0.0.1:8101","models":["llama-3.1-8b-instruct"],"apiKey":"emu-key","kvCacheTokens":262144}]'
run weight0 '[{"id":"emu-1","url":"http://127.0.0.1:8101","models":["llama-3.1-8b-instruct"],"weight":0,"kvCacheTokens":262144}]'
run weightneg '[{"id":"emu-1","url":"http://127.0.0.1:8101","models":["llama-3.1-8b-instruct"],"weight":-1,"kvCacheTokens":262144}]'
run modelsstr '[{"id":"emu-1","url":"http://127.0.0.1:8101","models":"llama-3.1-8b-instruct","kvCacheTokens":262144}]'
run nokv '[{"id":"emu-1","url":"http://127.0.0.1:8101","models":["llama-3.1-8b-instruct"]}]'
run policy "[$E]" ROUTING_POLICY=fastest
run prefix0 "[$E]" PREFIX_TOKENS=0
run prefixhuge "[$E]" PREFIX_TOKENS=99999999
run nobackends -
DROPKEYS=1 run nokeys "[$E]"
;;
*) "$@";;
esac
