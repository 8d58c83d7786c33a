#!/usr/bin/env bash
# Burst seeds outside both sets (burst-split-2's method, its seeds.sh): main, burst-split-2's rule with its guard
# (patch ../burst-split-2/burst-split-guard.patch on main) and this branch's joiners'-delay test. Each version is a
# `git archive` in /tmp/jd-VERSION (node_modules linked), so that the audit imports that version's src:
#   for v in main:main jd:joiner-delay; do mkdir -p /tmp/jd-${v%%:*} && git archive ${v#*:} | tar -x -C /tmp/jd-${v%%:*} && ln -s /work/main/node_modules /tmp/jd-${v%%:*}/node_modules; done
#   mkdir -p /tmp/jd-guard && git archive main | tar -x -C /tmp/jd-guard && (cd /tmp/jd-guard && patch -p1 < bench/results/burst-split-2/burst-split-guard.patch) && ln -s /work/main/node_modules /tmp/jd-guard/node_modules
# One run at a time, niced. Usage: bench/results/joiner-delay/seeds.sh OUT SEED...
VERSIONS="main guard jd" TREES=/tmp/jd- exec "$(dirname "$0")/../burst-split-2/seeds.sh" "$@"
