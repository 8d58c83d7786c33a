// Noise gauge for Mooncake MoE on 8 backends, scrape off (the tuning gate's configuration): prefix_aware's
// p99 TTFT with the tie tolerance moved (TIE=0.9 / 1 / 1.1 / 1.2 ms), a perturbation of no meaning that
// shows how far this p99 moves by chance (as tail-gaps/README.md's and engine-memory/tail.ts's gauges;
// tail.ts itself needs the scrape on). Run it from two checkouts (main's policy and this branch's).
//   MOONCAKE_TRACE=… TIE=1 npx tsx bench/results/admission-view/gauge.ts mooncake 8 2 tuning 1 qwen3-30b-a3b-h100-vllm
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import { viewOf } from "../../../sim/policies";
import { simulatePolicy } from "../../../sim/simulator";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING } from "../audit-run";

const { w, fleet } = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const tie = Number(process.env.TIE ?? 1);
if (!(tie >= 0)) throw new RangeError(`TIE: must be >= 0 ms, got ${process.env.TIE}`);
const r = simulatePolicy(
  w,
  fleet,
  "prefix_aware",
  (specs) =>
    new Router(specs, {
      policy: new PrefixAwarePolicy({ tieToleranceMs: tie }),
      blockTokens: w.blockTokens,
    }),
  viewOf("prefix_aware"),
);
console.log(`tie ${tie} ms: p50 ${r.ttftP50Ms.toFixed(0)} ms, p99 ${r.ttftP99Ms.toFixed(0)} ms`);
