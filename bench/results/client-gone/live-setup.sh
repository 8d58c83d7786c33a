#!/bin/bash
# Live check over real TCP: wrangler dev + one emulator with --control. Ports 8697 (emu), 8797 (gateway).
cd "$(git rev-parse --show-toplevel)"
cat > .dev.vars <<'V'
BACKENDS='[{"id":"live-1","url":"http://127.0.0.1:8697","models":["llama"],"apiKey":"emu-key","weight":1,"kvCacheTokens":262144}]'
GATEWAY_API_KEYS=live-client-key-one
ADMIN_TOKEN=live-admin-token-0123456789
V
nice -n 10 npx tsx bench/emulator/main.ts --port 8697 --model llama --api-key emu-key --control > /tmp/cg-emu.log 2>&1 &
echo $! > /tmp/cg-emu.pid
nice -n 10 npx wrangler dev --port 8797 --ip 127.0.0.1 > /tmp/cg-wrangler.log 2>&1 &
echo $! > /tmp/cg-wrangler.pid
for i in $(seq 1 60); do curl -s -o /dev/null http://127.0.0.1:8797/healthz && break; sleep 1; done
echo "gateway up after $i s"
