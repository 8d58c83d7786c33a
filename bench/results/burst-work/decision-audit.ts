// Per-decision audit of prefix_aware on a burst run: for each spill, its home, the cost at the home and at the
// chosen backend, every backend's predicted prefill queue (ms) and our work held (k tokens).
//   MOONCAKE_TRACE=... npx tsx bench/results/burst-work/decision-audit.ts burst 28 1 [preset]   (SHOW=N rows, ALL=1 every decision)
import { Router } from "../../../src/routing/router";
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { loadSetData } from "../../../sim/eval-sets";
import { engineFlags } from "../../../sim/flags";
import { prepareWorkload } from "../../../sim/prepare";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { simulatePolicy } from "../../../sim/simulator";

const [workload = "burst", rateS = "28", seedS = "1", preset = "llama-3.1-8b-h100-vllm"] = process.argv.slice(2);
const seed = Number(seedS);
const data = await loadSetData(workload, { rate: Number(rateS), seed, speed: 1 });
const w = prepareWorkload(data.workload, { prefixTokens: 32768, maxTokens: "clients", seed });
const engine = engineFlags(preset, undefined);
const policy = new PrefixAwarePolicy();
type Rec = { costs: number[]; matched: number[]; wait: number[]; held: number[]; best: number; reason: string; now: number };
const recs: Rec[] = [];
const origPick = policy.pick.bind(policy);
policy.pick = (req, fleet, ctx) => {
  const r = origPick(req, fleet, ctx);
  const p = policy as unknown as { costs: Float64Array };
  const m = fleet.matchedBlocks(req.blocks);
  recs.push({
    costs: Array.from(p.costs),
    matched: Array.from(m),
    wait: Array.from({ length: fleet.backends.length }, (_, i) => policy.model.queueWaitMs(i, ctx.now)),
    held: Array.from({ length: fleet.backends.length }, (_, i) => policy.model.heldTokens(i)),
    best: r.index,
    reason: r.reason,
    now: ctx.now,
  });
  return r;
};
const ttft: number[] = [];
const cachedT: number[] = [];
const res = simulatePolicy(
  w,
  { backends: 8, seed, ...engine },
  "prefix_aware",
  (backends) => new Router(backends, { policy, blockTokens: w.blockTokens }),
  GATEWAY_VIEW,
  undefined,
  { done(i, _b, c) { cachedT[i] = c; } },
);
console.log(`hit ${res.hitRate.toFixed(3)} p50 ${res.ttftP50Ms.toFixed(0)} p99 ${res.ttftP99Ms.toFixed(0)} reasons`, res.reasons, "prefillGpuS", res.prefillGpuSeconds.toFixed(1));
console.log("rate est tok/s", policy.model.prefillTokensPerSec(0).toFixed(0));
let shown = 0;
for (let i = 0; i < recs.length && shown < Number(process.env.SHOW ?? 40); i++) {
  const r = recs[i]!;
  if (r.reason !== "spill" && !process.env.ALL) continue;
  shown++;
  const home = r.matched.indexOf(Math.max(...r.matched));
  console.log(
    `#${i} t=${r.now.toFixed(0)} ${r.reason} -> b${r.best} (home b${home} m=${r.matched[home]}) cost home ${r.costs[home]!.toFixed(0)} chosen ${r.costs[r.best]!.toFixed(0)} | wait ${r.wait.map((x) => x.toFixed(0)).join(",")} | held ${r.held.map((x) => (x / 1000).toFixed(0)).join(",")} | cached ${cachedT[i]}`,
  );
}
