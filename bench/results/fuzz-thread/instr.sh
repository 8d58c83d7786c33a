#!/bin/bash
# fuzz-pass alone with instrument.patch applied to the snapshot (git -C DIR apply instrument.patch): prints each
# run's slowest mutants (FUZZTIMES), emulator requests over 1 s with their read/serve time and the emulator
# event loop's worst lag (EMUSLOW), and when a >1 MB body was sent / arrived / was read (MUTSTART, EMUARRIVE, EMUREAD).
# usage: instr.sh LABEL DIR — instrumented fuzz-pass alone, nice 10, no busy loops (other engineers' load only)
LABEL=$1; cd $2
L0=$(cut -d' ' -f1 /proc/loadavg)
/usr/bin/time -f "maxrss %M KB" nice -n 10 npx vitest run --project workers --silent=false test/worker/fuzz-pass.test.ts > /tmp/ft/$LABEL.log 2>&1
L1=$(cut -d' ' -f1 /proc/loadavg)
R=$(sed 's/\x1b\[[0-9;]*m//g' /tmp/ft/$LABEL.log | grep -E "^ +(✓|×) never" | sed 's/.*held *//')
M=$(grep -o '"[^"]*",[0-9]*,[0-9]*' /tmp/ft/$LABEL.log | head -1)
E=$(grep EMUSLOW /tmp/ft/$LABEL.log | awk '{print $NF}' | sort -n | tail -1)
echo "$LABEL $(date -u +%T) load $L0->$L1 $(grep -q '× never' /tmp/ft/$LABEL.log && echo FAIL || echo pass) $R slowest=[$M] emu-max=${E}ms $(grep maxrss /tmp/ft/$LABEL.log) $(sed 's/\x1b\[[0-9;]*m//g' /tmp/ft/$LABEL.log | grep -o 'no answer within.*' | head -1)"
