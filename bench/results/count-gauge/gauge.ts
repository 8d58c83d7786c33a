// Count gauge: prefix_aware alone on one scoring-set run of the race with the tie tolerance moved (TIE, ms), a
// perturbation of no meaning that shows how far issue #12's near-line figures move by chance. Prints one JSON
// line (p50/p99 TTFT, hit rate) for count-gauge/summary.ts to set beside the record's peers. TIE=1 must give
// after-rescore's prefix_aware to the ms (summary.ts checks it). An instrument only: no tolerance is chosen here.
//   MOONCAKE_TRACE=… TIE=0.9 npx tsx bench/results/count-gauge/gauge.ts mooncake 16 4 scoring 3 qwen3-30b-a3b-h100-vllm
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import { viewOf } from "../../../sim/policies";
import { simulatePolicy } from "../../../sim/simulator";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING } from "../audit-run";

const a = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const tie = Number(process.env.TIE ?? 1);
if (!(tie >= 0)) throw new RangeError(`TIE: must be >= 0 ms, got ${process.env.TIE}`);
const r = simulatePolicy(
  a.w,
  a.fleet,
  "prefix_aware",
  (specs) => new Router(specs, { policy: new PrefixAwarePolicy({ tieToleranceMs: tie }), blockTokens: a.w.blockTokens }),
  viewOf("prefix_aware"),
);
console.log(
  JSON.stringify({
    workload: a.spec,
    backends: a.backends,
    load: a.load,
    set: a.set,
    seed: a.seed,
    preset: a.preset,
    tie,
    ttftP50Ms: r.ttftP50Ms,
    ttftP99Ms: r.ttftP99Ms,
    hitRate: r.hitRate,
  }),
);
