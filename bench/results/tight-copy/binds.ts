// @ts-nocheck -- runs on branch tight-copy only: its CostObserver passes the copy charge (copyMs), main's does not.
// How often the tight-copy charge binds, and how often it decides (an audit, not a policy). For one run of
// prefix_aware (this tree's policy; args as admission-view/gauge.ts): decisions, decisions where some
// candidate was charged a copy (copyMs > 0), and decisions where the charge decided (the backend picked was
// not the cheapest by more than the tie tolerance once the charges are taken out), with the run's p99, hit
// and preemptions.
//   MOONCAKE_TRACE=… npx tsx bench/results/tight-copy/binds.ts multi-turn 8 45 tuning 2 qwen3-30b-a3b-h100-vllm
import { DEFAULT_TIE_TOLERANCE_MS, PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import { viewOf } from "../../../sim/policies";
import { simulatePolicy } from "../../../sim/simulator";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING } from "../audit-run";

const { w, fleet } = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const policy = new PrefixAwarePolicy();
let decisions = 0;
let charged = 0;
let decided = 0;
let chargedMs = 0;
// This decision's candidates: cost with and without the charge.
let withCopy: number[] = [];
let withoutCopy: number[] = [];
policy.costObserver = (_b, _t, _r, _f, cost, copyMs) => {
  withCopy.push(cost);
  withoutCopy.push(cost - copyMs);
  if (copyMs > 0) chargedMs += copyMs;
};
const flush = () => {
  if (withCopy.length === 0) return;
  decisions++;
  if (withCopy.some((c, k) => c !== withoutCopy[k])) {
    charged++;
    // The charge decided when the cheapest with it is not within the tolerance of the cheapest without it.
    const bestWith = withCopy.indexOf(Math.min(...withCopy));
    const leastWithout = Math.min(...withoutCopy);
    if (withoutCopy[bestWith]! > leastWithout + DEFAULT_TIE_TOLERANCE_MS) decided++;
  }
  withCopy = [];
  withoutCopy = [];
};
const pick = policy.pick.bind(policy);
policy.pick = (req, view, ctx) => {
  const p = pick(req, view, ctx);
  flush();
  return p;
};
const r = simulatePolicy(
  w,
  fleet,
  "prefix_aware",
  (specs) => new Router(specs, { policy, blockTokens: w.blockTokens }),
  viewOf("prefix_aware"),
);
console.log(
  `${process.argv.slice(2).join(" ")}: p99 ${r.ttftP99Ms.toFixed(0)} ms, hit ${(100 * r.hitRate).toFixed(1)}%, ` +
    `preemptions ${r.preemptions ?? "-"}; decisions ${decisions}, charged ${charged}, decided by it ${decided}` +
    `, mean charge where charged ${(chargedMs / Math.max(1, charged)).toFixed(1)} ms (summed over candidates)`,
);
