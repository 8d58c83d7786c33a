// How large the eviction price's p is (bench/results/policy-work.md "Eviction age"): runs prefix_aware with
// the patch applied (`git apply bench/results/evict-age/evict-age.patch` on c0eb96d) on one tuning run,
// seed 2, and prints, over every decision and every backend whose index had less free room than the
// prompt, the mean and largest p (FleetView.tailReuse), how often it was > 0, and backend 0's p every
// 500 decisions.
//   MOONCAKE_TRACE=... npx tsx bench/results/evict-age/tail-share.ts mooncake 8 2.45 llama-3.1-8b-h100-vllm
//   npx tsx bench/results/evict-age/tail-share.ts multi-turn 8 40 qwen3-30b-a3b-h100-vllm 10000
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import type { FleetView, PolicyPick, RouteContext, RouteRequest } from "../../../src/routing/types";
import { loadSetData } from "../../../sim/eval-sets";
import { engineFlags } from "../../../sim/flags";
import { prepareWorkload } from "../../../sim/prepare";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { type FleetConfig, type RouterFactory, simulatePolicy } from "../../../sim/simulator";

const [spec = "mooncake", b = "8", load = "2.45", preset = "llama-3.1-8b-h100-vllm", reqs] = process.argv.slice(2);
const isTrace = spec === "mooncake";
const data = await loadSetData(spec, {
  rate: isTrace ? 1 : Number(load),
  seed: 2,
  speed: isTrace ? Number(load) : 1,
  set: "tuning",
  ...(reqs ? { requests: Number(reqs) } : {}),
});
const w = prepareWorkload(data.workload, { prefixTokens: 32768, maxTokens: "clients", seed: 2 });
const fleet: FleetConfig = { backends: Number(b), seed: 2, ...engineFlags(preset, undefined) };
type Patched = FleetView & { tailReuse?(i: number): number; freeCacheTokens?(i: number): number };
let picks = 0;
let overflowing = 0;
let charged = 0;
let sum = 0;
let max = 0;
const series: string[] = [];
class Probe extends PrefixAwarePolicy {
  override pick(req: RouteRequest, f: Patched, ctx: RouteContext): PolicyPick {
    if (f.tailReuse === undefined || f.freeCacheTokens === undefined)
      throw new Error("no FleetView.tailReuse: apply bench/results/evict-age/evict-age.patch first");
    picks++;
    for (let i = 0; i < f.backends.length; i++) {
      if (f.freeCacheTokens(i) >= req.promptTokens) continue;
      const p = f.tailReuse(i);
      overflowing++;
      sum += p;
      if (p > max) max = p;
      if (p > 0) charged++;
    }
    if (picks % 500 === 0) series.push(f.tailReuse(0).toFixed(3));
    return super.pick(req, f, ctx);
  }
}
const make: RouterFactory = (specs) => new Router(specs, { policy: new Probe(), blockTokens: w.blockTokens });
const r = simulatePolicy(w, fleet, "prefix_aware", make, GATEWAY_VIEW);
console.log(
  `${spec} ${b}b ${preset} tuning seed 2: hit ${(100 * r.hitRate).toFixed(1)}% p99 ${r.ttftP99Ms.toFixed(0)} ms; ` +
    `${picks} decisions, ${overflowing} backend-decisions overflowing the free room: mean p ${(sum / overflowing).toFixed(3)}, ` +
    `max ${max.toFixed(3)}, p > 0 on ${charged}; backend 0's p every 500 decisions: ${series.join(" ")}`,
);
