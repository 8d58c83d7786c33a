#!/bin/bash
# live.sh SCOPE CACHESALT: the probe sequence of red-team.md "Prefix sharing scoped per gateway key", against
# a dev gateway already running with PREFIX_SCOPE=SCOPE and every backend's "cacheSalt": CACHESALT.
# Key 1 sends "Hooli" twice; key 2 then guesses it with no tenant, with key 1's tenant name, and under 14 tenant
# names of its own (each lands its guess on the ring position of that tenant's chain); "Pied", which key 1
# never sent, is the control.
set -euo pipefail
p="$(dirname "$0")/probe.sh"
K1=pgw-k1-local-0001 K2=pgw-k2-local-0002
echo "== PREFIX_SCOPE=$1 cacheSalt=$2"
"$p" $K1 Hooli; sleep 1; "$p" $K1 Hooli acme; sleep 1; "$p" $K1 Hooli; sleep 1
"$p" $K2 Hooli; "$p" $K2 Hooli acme
for t in u1 u2 u3 u4 u5 u6 u7 u8 u9 u10 u11 u12 u13 u14; do "$p" $K2 Hooli $t; done
for t in u1 u2 u3 u4 u5 u6 u7 u8 u9 u10 u11 u12 u13 u14; do "$p" $K2 Pied $t; done
