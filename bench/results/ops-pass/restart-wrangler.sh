#!/bin/sh
# Stops the wrangler dev this pass started (pid in /tmp/ops/wrangler.pid, its own process group) and starts it again
# on .dev.vars (the worktree's, git-ignored) — under wrangler dev a changed vars file takes effect only on a restart.
# Prints seconds until /healthz answers again.
[ -f /tmp/ops/wrangler.pid ] && kill -- -"$(cat /tmp/ops/wrangler.pid)" 2>/dev/null
t0=$(date +%s.%N)
PATH=$PWD/node_modules/.bin:$PATH setsid node_modules/.bin/wrangler dev --port 8787 --ip 127.0.0.1 >> /tmp/ops/wrangler.log 2>&1 &
echo $! > /tmp/ops/wrangler.pid
for i in $(seq 1 120); do curl -s -m 1 -o /dev/null http://127.0.0.1:8787/healthz && break; sleep 0.25; done
echo "wrangler back after $(echo "$(date +%s.%N) - $t0" | bc) s"
