// What the learned margin (src/routing/estimate-margin.ts) learned and asked for on one run: each backend's
// relative error of the Worker's count past the window at the run's end, and the margin at each decision
// (over the candidates asked). Branch-only: it reads the policy's private margin, which main does not have.
//   MOONCAKE_TRACE=… npx tsx bench/results/learned-margin/margin-stats.ts mooncake 8 2 tuning 1 qwen3-30b-a3b-h100-vllm
import type { EstimateMargin } from "../../../src/routing/estimate-margin";
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import { viewOf } from "../../../sim/policies";
import { simulatePolicy } from "../../../sim/simulator";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING } from "../audit-run";

const { w, fleet } = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
let policy: PrefixAwarePolicy | undefined;
const asked: number[] = [];
const r = simulatePolicy(
  w,
  fleet,
  "prefix_aware",
  (specs) => {
    policy = new PrefixAwarePolicy();
    const m = (policy as unknown as { margin: EstimateMargin }).margin;
    const inner = m.marginTokens.bind(m);
    m.marginTokens = (i: number, tail: number) => {
      const v = inner(i, tail);
      asked.push(v);
      return v;
    };
    return new Router(specs, { policy, blockTokens: w.blockTokens });
  },
  viewOf("prefix_aware"),
);
const m = (policy as unknown as { margin: EstimateMargin }).margin;
const q = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
asked.sort((a, b) => a - b);
const pos = asked.filter((v) => v > 0);
console.log(`p99 ${r.ttftP99Ms.toFixed(0)} ms; margins asked ${asked.length}, > 0: ${pos.length}`);
if (pos.length > 0)
  console.log(
    `margin tokens where > 0: p10 ${q(pos, 0.1).toFixed(0)}, p50 ${q(pos, 0.5).toFixed(0)}, p90 ${q(pos, 0.9).toFixed(0)}, max ${pos.at(-1)?.toFixed(0)}`,
);
for (let i = 0; i < fleet.backends; i++) {
  const e = m.errors(i);
  console.log(
    e === undefined
      ? `backend ${i}: no samples`
      : `backend ${i}: samples ${e.samples}, mean ${e.mean.toFixed(3)}, sd ${e.sd.toFixed(3)}`,
  );
}
