#!/usr/bin/env bash
# The scoring set, prefix_aware only, at each notice delay (branch ft-delay); one after another.
# Folder ftd-<label> gets the reports; NOTICE_DELAY_MS as sim/notice-delay.ts parses it.
set -euo pipefail
cd "$(dirname "$0")/../../.."
export MOONCAKE_TRACE=${MOONCAKE_TRACE:-/work/shared/traces/mooncake_conversation.jsonl}
run() { # label spec
  echo "=== ftd-$1 (NOTICE_DELAY_MS=$2) $(date -u +%T)"
  NOTICE_DELAY_MS=$2 POLICIES=prefix_aware nice -n 10 npm run bench:sim:all -- scoring "ftd-$1"
}
for pair in "$@"; do run "${pair%%=*}" "${pair#*=}"; done
echo "=== done $(date -u +%T)"
