#!/usr/bin/env bash
# Scenario B of red-team.md "Overload: a slow fleet" (150 requests, 2.5/s for 60 s, 256 output tokens, onto four
# emulators of batch 4 and 9,000 KV tokens), through `wrangler dev`, once per arm: MAX_INFLIGHT_PER_BACKEND=0
# (off, the default) and =$BOUND. Fresh emulators and fresh .wrangler state per arm (same seeds: same prompts).
#   BOUND=8 bash bench/results/shed/run.sh        (from the worktree root; writes bench/results/shed/*.json)
# CELLS=2 splits the pool into RouterDO cells, and ARMS="NAME:BOUND …" names the arms (default: off:0 and
# bound$BOUND:$BOUND): bench/results/shed-cells/run.sh runs one bounded arm on two cells this way.
set -euo pipefail
cd "$(dirname "$0")/../../.."
# The tools need Node >= 22.12: the one npm install put in node_modules/.bin (README "Quick start").
export PATH="$PWD/node_modules/.bin:$PATH"
OUT=${OUT:-bench/results/shed}
CELLS=${CELLS:-}
BOUND=${BOUND:-8}
read -r -a EMU_PORTS <<<"${EMU_PORTS:-8761 8762 8763 8764}"
GW_PORT=${GW_PORT:-8796}
KEY=shed-bench-key-0123456789
ADMIN=shed-bench-admin-0123456789
pids=()
# Each server runs in a process group of its own (setsid), stopped as a group: its children (workerd) too.
cleanup() { for p in "${pids[@]}"; do kill -- "-$p" 2>/dev/null || true; done; pids=(); }
trap cleanup EXIT

backends() {
  local out="" i=1
  for p in "${EMU_PORTS[@]}"; do
    out+="${out:+,}{\"id\":\"emu-$i\",\"url\":\"http://127.0.0.1:$p\",\"models\":[\"llama\"],\"apiKey\":\"emu-key\",\"weight\":1,\"kvCacheTokens\":9000}"
    i=$((i + 1))
  done
  echo "[$out]"
}

arm() {
  local name=$1 bound=$2
  for p in "${EMU_PORTS[@]}"; do
    nice -n 10 setsid node_modules/.bin/tsx bench/emulator/main.ts --port "$p" --host 127.0.0.1 --model llama --api-key emu-key \
      --prefill-tps 1000 --decode-base-ms 50 --max-running 4 --kv-tokens 9000 >"$OUT/emu-$name-$p.log" 2>&1 &
    pids+=($!)
  done
  cat >.dev.vars <<VARS
BACKENDS='$(backends)'
GATEWAY_API_KEYS=$KEY
ADMIN_TOKEN=$ADMIN
KEY_RATE_LIMIT=off
MAX_INFLIGHT_PER_BACKEND=$bound
${CELLS:+ROUTER_CELLS=$CELLS}
VARS
  local state
  state=$(mktemp -d)
  nice -n 10 setsid node_modules/.bin/wrangler dev --port "$GW_PORT" --ip 127.0.0.1 --persist-to "$state" >"$OUT/wrangler-$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$GW_PORT/healthz" >/dev/null 2>&1 && break
    sleep 1
  done
  for p in "${EMU_PORTS[@]}"; do curl -sf "http://127.0.0.1:$p/health" >/dev/null; done
  nice -n 10 npx tsx bench/overload/spike.ts --targets "http://127.0.0.1:$GW_PORT" --key "$KEY" --model llama \
    --rate 2.5 --duration-s 60 --max-tokens 256 --out "$OUT/spike-$name.json" | tee "$OUT/spike-$name.txt"
  curl -sf -H "authorization: Bearer $ADMIN" "http://127.0.0.1:$GW_PORT/admin/stats" >"$OUT/stats-$name.json"
  cleanup
  rm -rf "$state" .dev.vars
  sleep 2
}

for a in ${ARMS:-off:0 bound$BOUND:$BOUND}; do arm "${a%%:*}" "${a##*:}"; done
