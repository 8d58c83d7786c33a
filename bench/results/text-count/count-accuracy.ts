// How close the policy's prompt count is to the truth past the key window, on this branch: for every request the
// window cut, the Worker's count and the policy's count (PrefixAwarePolicy.countOf: an earlier turn's
// usage.prompt_tokens + the Worker's count of what is new, src/routing/text-counts.ts) against the true count.
// Audit only; nothing here is used by the router or the simulator.
//   MOONCAKE_TRACE=... npx tsx bench/results/text-count/count-accuracy.ts mooncake 8 2 tuning 2 qwen3-30b-a3b-h100-vllm
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { simulatePolicy } from "../../../sim/simulator";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING, quantileOf } from "../audit-run";

const run = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const { w, fleet } = run;
const n = w.requests.length;
const policy = new PrefixAwarePolicy();
const counted = new Float64Array(n).fill(Number.NaN);
let last = Number.NaN;
const p = policy as unknown as { countOf: (req: unknown, bt: number) => { prompt: number } };
const countOf = p.countOf.bind(policy);
p.countOf = (req, bt) => {
  const c = countOf(req, bt);
  last = c.prompt;
  return c;
};
const res = simulatePolicy(w, fleet, "prefix_aware", (specs) => new Router(specs, { policy, blockTokens: w.blockTokens }), GATEWAY_VIEW, undefined, {
  routed(i) {
    counted[i] = last;
  },
});
const k = (v: number) => `${(v / 1000).toFixed(1)}k`;
const cut: number[] = [];
for (let i = 0; i < n; i++) if (w.gatewayPromptTokens[i]! - 32_768 >= w.blockTokens) cut.push(i);
const corrected = cut.filter((i) => counted[i] !== w.gatewayPromptTokens[i]);
const err = (xs: number[], of: (i: number) => number) => xs.map((i) => Math.abs(w.requests[i]!.promptTokens - of(i)));
const line = (label: string, xs: number[]) => {
  const a = err(xs, (i) => w.gatewayPromptTokens[i]!);
  const b = err(xs, (i) => counted[i]!);
  const sum = (v: number[]) => v.reduce((s, x) => s + x, 0);
  console.log(
    `${label}: ${xs.length} requests; |true − Worker's count| p50 ${k(quantileOf(a, 0.5))} p90 ${k(quantileOf(a, 0.9))} mean ${k(sum(a) / Math.max(1, a.length))}; |true − policy's count| p50 ${k(quantileOf(b, 0.5))} p90 ${k(quantileOf(b, 0.9))} mean ${k(sum(b) / Math.max(1, b.length))}`,
  );
};
console.log(`${run.spec} ${run.set} seed ${run.seed}, ${n} requests; prefix_aware p99 ${(res.ttftP99Ms / 1000).toFixed(2)} s`);
console.log(`cut by the window (the Worker estimates past it): ${cut.length}; counted from an earlier turn's usage: ${corrected.length}`);
line("all cut by the window", cut);
line("counted from an earlier turn", corrected);
line("not (no earlier turn completed, or counted shorter)", cut.filter((i) => counted[i] === w.gatewayPromptTokens[i]));
