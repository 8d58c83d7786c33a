#!/bin/bash
# The simulator runs behind bench/results/engine-signals.md, one at a time (nice: the machine is shared).
#   bench/engine-signals/sim-matrix.sh tuning   → bench/results/engine-signals/tuning/ (chose the interval: 1000 ms)
#   bench/engine-signals/sim-matrix.sh scoring  → bench/results/engine-signals/ (the reported figures)
# A second client sends 30% of the requests around the gateway: to engines 0–1 only (0.3:2) or to all 8 (0.3);
# the scoring set also runs with no second client. Mooncake needs $MOONCAKE_TRACE or ../shared/traces/.
set -euo pipefail
cd "$(dirname "$0")/../.."
P=prefix_aware,least_outstanding,sglang,llmd,dynamo
run() { echo "== $*"; nice -n 10 npx tsx sim/main.ts "$@" --policies $P --out "$OUT" 2>&1 | tail -1; }
case "${1:-}" in
tuning)
  OUT=bench/results/engine-signals/tuning
  for sc in 0.3:2 0.3; do for ms in 0 250 1000 5000; do
    tag=$(echo $sc | tr ':.' '-_')
    run --workload generated-shared-prefix --backends 8 --rate 40 --set tuning --second-client $sc --scrape-ms $ms --name gsp-sc$tag-ms$ms
    run --workload multi-turn --backends 8 --rate 100 --set tuning --second-client $sc --scrape-ms $ms --name mt-sc$tag-ms$ms
    run --workload zipf --backends 8 --rate 80 --set tuning --second-client $sc --scrape-ms $ms --name zipf-sc$tag-ms$ms
    run --workload mooncake --backends 8 --speed 2.6 --set tuning --second-client $sc --scrape-ms $ms --name mc-sc$tag-ms$ms
  done; done ;;
scoring)
  OUT=bench/results/engine-signals
  for ms in 0 1000; do for sc in 0.3:2 0.3 none; do
    tag=$(echo $sc | tr ':.' '-_'); scf=(--second-client $sc); [ $sc = none ] && scf=()
    for seed in 3 4 5; do
      run --workload generated-shared-prefix --backends 8 --rate 40 --set scoring --seed $seed "${scf[@]}" --scrape-ms $ms --name gsp-s$seed-sc$tag-ms$ms
      run --workload multi-turn --backends 8 --rate 100 --set scoring --seed $seed "${scf[@]}" --scrape-ms $ms --name mt-s$seed-sc$tag-ms$ms
      run --workload zipf --backends 8 --rate 80 --set scoring --seed $seed "${scf[@]}" --scrape-ms $ms --name zipf-s$seed-sc$tag-ms$ms
    done
    run --workload mooncake --backends 8 --speed 2.6 --set scoring "${scf[@]}" --scrape-ms $ms --name mc-sc$tag-ms$ms
  done; done ;;
*) echo "usage: $0 tuning|scoring" >&2; exit 2 ;;
esac
