#!/usr/bin/env bash
# Gate 2 of moe8-expect: moe8-resid's gate 2 (same groups, loads and speeds) on data nobody had read: Mooncake's
# scoring half with arrival seeds 33-36 and 53-56, synthetic seeds 18-20. Run from the tree whose policy is measured.
#   main (ddabec26), with Dynamo on Mooncake:  cd /work/wt/expect-main && <this>/gate2.sh <this>/g2-main prefix_aware prefix_aware,dynamo
#   this branch:                               bench/results/moe8-expect/gate2.sh $PWD/bench/results/moe8-expect/g2-expect prefix_aware prefix_aware
# Usage: gate2.sh OUT SYNTHETIC_POLICIES MOONCAKE_POLICIES (export MOONCAKE_TRACE first)
MC_SEEDS="33 34 35 36 53 54 55 56" SYN_SEEDS="18 19 20" exec "$(dirname "$0")/../moe8-resid/gate2.sh" "$@"
