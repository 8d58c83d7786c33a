#!/usr/bin/env bash
# Live check of the ops-probe changes under `wrangler dev` (the operator's own console), one emulator:
#   1. backend check: emu-good (right url and model), emu-prefix (url + /vllm, a prefix the server does not serve),
#      emu-name (the server, listed under another model name in BACKENDS): /healthz (admin and public), the
#      console's backend_check lines, and what a client gets;
#   2. an invalid var (SHADOW=true): the 503, and the console's config_invalid line with the value.
# Usage: [IDLE_WAIT=S] bash bench/results/ops-probe/live.sh > bench/results/ops-probe/live.md 2>&1
#   IDLE_WAIT: also read the pool's /healthz figures after S seconds without traffic (eviction of an idle RouterDO).
set -u
cd "$(dirname "$0")/../../.."
EMU_PORT=${EMU_PORT:-8931}; GW_PORT=${GW_PORT:-8797}; INSPECT=${INSPECT:-9331}
KEY=pgw-ops-probe-client-key; ADMIN=pgw-ops-probe-admin-token-0123
tmp=$(mktemp -d)
# Each in a process group of its own (setsid), so that stopping it stops wrangler's workerd and tsx's node too.
setsid npx tsx bench/emulator/main.ts --port "$EMU_PORT" --model llama-3.1-8b-instruct --api-key emu-key > "$tmp/emu.log" 2>&1 &
EMU=$!
entry() { printf '{"id":"%s","url":"%s","models":["%s"],"apiKey":"emu-key","weight":1,"kvCacheTokens":262144}' "$1" "$2" "$3"; }
BACKENDS="[$(entry emu-good "http://127.0.0.1:$EMU_PORT" llama-3.1-8b-instruct),$(entry emu-prefix "http://127.0.0.1:$EMU_PORT/vllm" llama-3.1-8b-instruct),$(entry emu-name "http://127.0.0.1:$EMU_PORT" Llama-3.1-8B-Instruct)]"
run_gateway() { # $1: env file, then more --var NAME:VALUE
  local file=$1; shift
  setsid npx wrangler dev --port "$GW_PORT" --inspector-port "$INSPECT" --env-file "$file" --var KEY_RATE_LIMIT:off "$@" > "$tmp/gw.log" 2>&1 &
  GW=$!
  for _ in $(seq 1 120); do curl -s -o /dev/null "http://127.0.0.1:$GW_PORT/healthz" && break; sleep 0.5; done
}
stop_gateway() { kill -- -"$GW" 2>/dev/null; wait "$GW" 2>/dev/null; sleep 1; }
chat() { curl -s -o /dev/null -w "%{http_code} backend=%header{x-prefix-gateway-backend}\n" "http://127.0.0.1:$GW_PORT/v1/chat/completions" \
  -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \
  -d "{\"model\":\"$1\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\",\"content\":\"hello $2\"}]}"; }

{ echo "BACKENDS='$BACKENDS'"; echo "GATEWAY_API_KEYS=$KEY"; echo "ADMIN_TOKEN=$ADMIN"; } > "$tmp/a.vars"
echo "## 1. Backend check (BACKEND_CHECK_SECONDS default, 300)"
echo; echo '```'
run_gateway "$tmp/a.vars"
echo "client requests, pool llama-3.1-8b-instruct (emu-good, emu-prefix):"
for i in 1 2 3 4; do chat llama-3.1-8b-instruct "$i"; done
echo "client requests, pool Llama-3.1-8B-Instruct (emu-name):"
for i in 1 2; do chat Llama-3.1-8B-Instruct "$i"; done
sleep 2
echo; echo "GET /healthz (public):"
curl -s "http://127.0.0.1:$GW_PORT/healthz"; echo
echo; echo "GET /healthz (admin), each pool's instanceStartedAt, countingSince and backendCheck:"
curl -s -H "Authorization: Bearer $ADMIN" "http://127.0.0.1:$GW_PORT/healthz" \
  | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);for(const [m,p] of Object.entries(j.pools))console.log(m, JSON.stringify({instanceStartedAt:p.instanceStartedAt,countingSince:p.countingSince,backendCheck:p.backendCheck},null,1))})'
echo; echo "GET /admin/stats, each backend's check (what the dashboard shows):"
curl -s -H "Authorization: Bearer $ADMIN" "http://127.0.0.1:$GW_PORT/admin/stats" \
  | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);for(const [m,p] of Object.entries(j.pools))for(const b of p.backends)console.log(m,b.id,JSON.stringify(b.check))})'
echo; echo "wrangler dev's console, the backend_check lines:"
grep -o '{"msg":"backend_check".*}' "$tmp/gw.log"
figures() {
  curl -s -H "Authorization: Bearer $ADMIN" "http://127.0.0.1:$GW_PORT/healthz" \
    | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const p=JSON.parse(s).pools["llama-3.1-8b-instruct"];console.log(JSON.stringify({instanceStartedAt:p.instanceStartedAt,countingSince:p.countingSince,routed:p.router.backends.reduce((n,b)=>n+b.routed,0),indexBlocks:p.router.indexBlocks,usageCompleted:p.usage.completed}))})'
}
if [ "${IDLE_WAIT:-0}" -gt 0 ]; then
  echo; echo "pool llama-3.1-8b-instruct's figures now, and after ${IDLE_WAIT} s idle (an idle RouterDO may be evicted):"
  figures; sleep "$IDLE_WAIT"; figures
fi
stop_gateway
echo '```'

echo; echo "## 2. An invalid var (SHADOW=true)"
echo; echo '```'
run_gateway "$tmp/a.vars" --var SHADOW:true
echo "GET /healthz (public):"
curl -s "http://127.0.0.1:$GW_PORT/healthz"; echo
chat llama-3.1-8b-instruct x
sleep 1
echo "wrangler dev's console, the config_invalid lines:"
grep -o '{"msg":"config_invalid".*}' "$tmp/gw.log"
stop_gateway
echo '```'
kill -- -"$EMU" 2>/dev/null; wait "$EMU" 2>/dev/null
rm -rf "$tmp"
