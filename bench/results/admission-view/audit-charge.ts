// Runs on commit f991ffc only (the queue-charge form: PrefixAwarePolicy.headOfLine); kept for its figures in README.md.
// How often the admission view (src/routing/admission-view.ts) is charged and how often it moves a decision,
// on one run of prefix_aware, scrape off: decisions where some candidate backend was charged the waiting its
// placement would impose, and those whose cheapest backend without the charge is not the chosen one (ties
// within the tolerance aside), with the prompt lengths of the moved requests. An audit only: the charge is
// observed by wrapping the policy's method, nothing here changes routing.
//   MOONCAKE_TRACE=… npx tsx bench/results/admission-view/audit.ts mooncake 8 2 tuning 1 qwen3-30b-a3b-h100-vllm
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING, quantileOf, simulatePrefixAware } from "../audit-run";

const { w, fleet } = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
type Inside = { headOfLine: (...a: unknown[]) => number; pick: (...a: unknown[]) => { index: number } };
const proto = PrefixAwarePolicy.prototype as unknown as Inside;
let charges = new Map<number, number>();
const original = proto.headOfLine;
proto.headOfLine = function (this: unknown, ...a: unknown[]) {
  const ms = original.apply(this, a);
  if (ms > 0) charges.set(a[0] as number, ms);
  return ms;
};
let decisions = 0;
let charged = 0;
const moved: number[] = [];
const sizes: number[] = [];
const pick = proto.pick;
proto.pick = function (this: { costs: Float64Array }, ...a: unknown[]) {
  charges = new Map();
  const out = pick.apply(this, a);
  decisions++;
  if (charges.size === 0) return out;
  charged++;
  const req = a[0] as { promptTokens: number };
  sizes.push(req.promptTokens);
  let best = -1;
  let bestCost = Number.POSITIVE_INFINITY;
  for (let i = 0; i < this.costs.length; i++) {
    const c = this.costs[i]! - (charges.get(i) ?? 0);
    if (c < bestCost) {
      bestCost = c;
      best = i;
    }
  }
  if (best !== out.index && this.costs[out.index]! - (charges.get(out.index) ?? 0) > bestCost + 1)
    moved.push(req.promptTokens);
  return out;
};
const r = simulatePrefixAware(w, fleet);
const q = quantileOf;
console.log(`prefix_aware: p50 ${r.ttftP50Ms.toFixed(0)} ms, p99 ${r.ttftP99Ms.toFixed(0)} ms`);
console.log(`decisions ${decisions}; some backend charged ${charged} (${((100 * charged) / decisions).toFixed(2)}%)`);
console.log(
  `charged prompts (tokens) p10 ${q(sizes, 0.1)} median ${q(sizes, 0.5)} p90 ${q(sizes, 0.9)}; moved by the charge ${moved.length}: median ${q(moved, 0.5)}, p10 ${q(moved, 0.1)}, p90 ${q(moved, 0.9)}`,
);
