// How closely bursts cluster in one run of a burst workload: a burst's start is its first request's arrival (a
// burst = the requests sharing their prompt's first block). For each window W it prints the most burst starts in
// any W seconds and where, and how many backend-sized clusters there are (starts ≥ half the fleet within W).
// It reads the workload only (no router, no engine): whether a seed's tail can be a cluster of bursts.
//   npx tsx bench/results/burst-s5/cluster.ts WORKLOAD BACKENDS LOAD SET SEED[,SEED...] PRESET
//   e.g. ... cluster.ts burst-mooncake 8 28 scoring 3,4,5 llama-3.1-8b-h100-vllm
import { loadAuditRun } from "../audit-run";

const [spec = "burst-mooncake", backends = "8", load = "28", set = "scoring", seeds = "5", preset = "llama-3.1-8b-h100-vllm"] =
  process.argv.slice(2);
const windows = [0.25, 0.5];
for (const seed of seeds.split(",").map(Number)) {
  const { w } = await loadAuditRun({ spec, backends: Number(backends), load: Number(load), set, seed, preset });
  const start = new Map<number, number>();
  w.requests.forEach((r, i) => {
    const g = w.promptBlocks[i]![0]!;
    if (!start.has(g)) start.set(g, r.arrivalMs);
  });
  const ts = [...start.values()].sort((a, b) => a - b);
  const parts = windows.map((win) => {
    let best = 0;
    let at = 0;
    let clusters = 0;
    let lastEnd = -1;
    for (let i = 0, j = 0; i < ts.length; i++) {
      while (ts[i]! - ts[j]! > win * 1000) j++;
      const k = i - j + 1;
      if (k > best) {
        best = k;
        at = ts[j]!;
      }
      // Count disjoint clusters: a window with ≥ half the fleet's starts, not overlapping the last one counted.
      if (k >= Number(backends) / 2 && ts[j]! > lastEnd) {
        clusters++;
        lastEnd = ts[i]!;
      }
    }
    return `W ${win}s: max ${best} starts (from t=${(at / 1000).toFixed(2)}s), clusters ≥ ${Number(backends) / 2}: ${clusters}`;
  });
  console.log(`${spec} ${set} seed ${seed}: ${ts.length} bursts over ${(ts[ts.length - 1]! / 1000).toFixed(1)} s; ${parts.join("; ")}`);
}
