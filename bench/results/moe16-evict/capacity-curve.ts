// The pooled oracle's hit against its capacity (a multiple of the fleet's KV), Mooncake MoE 16's tuning seeds: how
// far the working set sits from the fleet's KV. Where the curve is steep at ×1, blocks live at the edge of the pooled
// cache and any shortfall of a partitioned fleet's effective capacity (per-engine LRU horizons that differ) costs hit.
//   MOONCAKE_TRACE=… [SEEDS="1 2"] npx tsx bench/results/moe16-evict/capacity-curve.ts mooncake 16 4 tuning 0 qwen3-30b-a3b-h100-vllm
import { oracleHitRate } from "../../../sim/oracle";
import { type AuditRunSpec, loadAuditRun } from "../audit-run";

const [spec = "mooncake", backends = "16", load = "4", set = "tuning", , preset = "qwen3-30b-a3b-h100-vllm"] =
  process.argv.slice(2);
const seeds = (process.env.SEEDS ?? "1 2").trim().split(/\s+/).map(Number);
const MULTIPLES = [0.5, 0.75, 0.85, 0.9, 0.95, 1, 1.05, 1.1, 1.25, 1.5, 2, 4];
const sums = MULTIPLES.map(() => 0);
let base = 0;
for (const seed of seeds) {
  const a: AuditRunSpec = { spec, backends: Number(backends), load: Number(load), set, seed, preset };
  const { w, fleet } = await loadAuditRun(a);
  const capacity = Math.floor((fleet.backends * fleet.kvCacheTokens) / w.blockTokens);
  const reqs = w.requests.map((r, i) => ({ blocks: w.promptBlocks[i]!, promptTokens: r.promptTokens }));
  MULTIPLES.forEach((m, k) => {
    const o = oracleHitRate(reqs, Math.floor(capacity * m), w.blockTokens);
    sums[k] = sums[k]! + o.cachedTokens;
    if (m === 1) base += o.cachedTokens;
  });
}
console.log(`# pooled oracle against capacity, ${spec} ${backends} ×${load} ${set}, seeds ${seeds.join(" ")}\n`);
console.log("| capacity (× the fleet's KV) | oracle hit (% of the ×1 oracle) |\n| --- | --- |");
MULTIPLES.forEach((m, k) => console.log(`| ×${m} | ${((100 * sums[k]!) / base).toFixed(1)}% |`));
