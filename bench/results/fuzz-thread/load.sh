#!/bin/bash
# The fuzz-thread branch's load experiment (figures in its commit messages). On a snapshot of a commit:
#   mkdir -p /tmp/ft/DIR && git archive REV | tar -x -C /tmp/ft/DIR && ln -s "$PWD/node_modules" /tmp/ft/DIR/
#   bench/results/fuzz-thread/load.sh LABEL /tmp/ft/DIR      # log in /tmp/ft/LABEL.log
# The busy loops share the cores with everyone: each run adds at most 2 x 135 s of them.
# usage: load.sh LABEL DIR — fuzz-pass + edge-fuzz (workers project) at nice 10; two nice-0 busy loops start
# when one of this run's test-model emulators has served its first prompt (tests running) and stop at its end.
LABEL=$1; DIR=$2
cd "$DIR" || exit 2
T0=$(date +%s)
echo "== $LABEL start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
nice -n 10 npx vitest run --project workers test/worker/fuzz-pass.test.ts test/worker/edge-fuzz.test.ts > /tmp/ft/$LABEL.log 2>&1 &
V=$!
tree() { local p; for p in $(pgrep -P "$1"); do echo "$p"; tree "$p"; done; }
L1=; L2=; TL=
while kill -0 $V 2>/dev/null && [ -z "$L1" ]; do
  sleep 1
  pids=" $V $(tree $V | tr '\n' ' ') "
  for port in $(ss -tlnpH 2>/dev/null | awk '{print $4, $6}' | grep '^127.0.0.1:' | while read a p; do
        pid=$(echo "$p" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2); [[ "$pids" == *" $pid "* ]] && echo "${a##*:}"; done); do
    m=$(curl -s -m 1 "127.0.0.1:$port/metrics" 2>/dev/null)
    if echo "$m" | grep -q 'model_name="test-model"' && echo "$m" | grep -E '^vllm:prompt_tokens_total' | grep -qv ' 0$'; then
      timeout 135 nice -n 0 node -e 'for(;;){}' & L1=$!
      timeout 135 nice -n 0 node -e 'for(;;){}' & L2=$!
      TL=$(date +%s); echo "   loops on at $(date -u +%T) (+$((TL-T0)) s)"; break
    fi
  done
done
wait $V; RC=$?
T1=$(date +%s)
[ -n "$L1" ] && { kill $L1 $L2 2>/dev/null; wait $L1 $L2 2>/dev/null; B=$((T1-TL)); [ $B -gt 135 ] && B=135; } || B=0
echo "== $LABEL end $(date -u +%T) rc=$RC wall=$((T1-T0))s loops=${B}s load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$LABEL $B" >> /tmp/ft/busy-seconds.txt
sed 's/\x1b\[[0-9;]*m//g' /tmp/ft/$LABEL.log | grep -E "✓|×|FAIL|Tests |Duration|no answer|exceeded|timed out|Timeout" | head -20
