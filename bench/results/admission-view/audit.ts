// How often the admission view (src/routing/admission-view.ts, the hold-back rule) binds on one run of
// prefix_aware, scrape off: decisions where some candidate backend was held back (the request would wait for
// KV memory there by the ledger, and another candidate admits it now), with their prompt lengths. An audit
// only: it reads the policy's per-decision arrays after each pick, nothing here changes routing.
//   MOONCAKE_TRACE=… npx tsx bench/results/admission-view/audit.ts mooncake 8 2 tuning 1 qwen3-30b-a3b-h100-vllm
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING, quantileOf, simulatePrefixAware } from "../audit-run";

const { w, fleet } = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
type Inside = {
  pick: (...a: unknown[]) => { index: number };
  costs: Float64Array;
  memoryWaits: Float64Array;
};
const proto = PrefixAwarePolicy.prototype as unknown as Inside;
let decisions = 0;
let held = 0;
let backendsHeld = 0;
const sizes: number[] = [];
const pick = proto.pick;
proto.pick = function (this: Inside, ...a: unknown[]) {
  const out = pick.apply(this, a);
  decisions++;
  let here = 0;
  for (let i = 0; i < this.costs.length; i++)
    if (this.memoryWaits[i]! > 0 && this.costs[i] === Number.POSITIVE_INFINITY) here++;
  if (here === 0) return out;
  held++;
  backendsHeld += here;
  sizes.push((a[0] as { promptTokens: number }).promptTokens);
  return out;
};
const r = simulatePrefixAware(w, fleet);
const q = quantileOf;
console.log(`prefix_aware: p50 ${r.ttftP50Ms.toFixed(0)} ms, p99 ${r.ttftP99Ms.toFixed(0)} ms`);
console.log(
  `decisions ${decisions}; some backend held back ${held} (${((100 * held) / decisions).toFixed(2)}%), ${backendsHeld} backends in all`,
);
console.log(`held prompts (tokens) p10 ${q(sizes, 0.1)} median ${q(sizes, 0.5)} p90 ${q(sizes, 0.9)}`);
