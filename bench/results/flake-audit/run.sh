#!/usr/bin/env bash
# usage: run.sh REV LABEL PROJECT [files...]  — runs vitest PROJECT on a clean snapshot of REV under one busy loop
set -u
rev=$1; label=$2; project=$3; shift 3
dir=/tmp/fa/snap-$label
rm -rf "$dir"; mkdir -p "$dir"
git -C /work/wt/flake-audit archive "$rev" | tar -x -C "$dir"
ln -s /work/main/node_modules "$dir/node_modules"
out=/work/wt/flake-audit/bench/results/flake-audit/runs/$label.log
timeout 1500 nice -n 0 node -e "for(;;){}" & busy=$!
start=$(date -u +%T)
(cd "$dir" && nice -n 10 npx vitest run --project "$project" "$@") > "$out" 2>&1
rc=$?
kill $busy 2>/dev/null
echo "rev=$rev started=$start ended=$(date -u +%T) rc=$rc loadavg=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$out"
rm -rf "$dir"
