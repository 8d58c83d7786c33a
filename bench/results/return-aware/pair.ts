// @ts-nocheck -- runs on branch return-aware only: its PrefixAwareOptions has returnAware, main's does not.
// return-aware's paired run: prefix_aware with the return-aware tie-break off (main's policy: no ReturnBook is
// built and every decision is main's) and on, on one run of the race, at each tie tolerance of TIES (ms, default
// "1"). One JSON line per (tie, on/off). The same loader and router as count-gauge/gauge.ts (TIE=1 off reproduces
// main's bench:sim figures). Run from the repository root, MOONCAKE_TRACE exported:
//   TIES="0.8 1 1.2" npx tsx bench/results/return-aware/pair.ts mooncake 16 4 scoring 89 qwen3-30b-a3b-h100-vllm
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import { viewOf } from "../../../sim/policies";
import { simulatePolicy } from "../../../sim/simulator";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING } from "../audit-run";

const a = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const ties = (process.env.TIES ?? "1").trim().split(/\s+/).map(Number);
for (const tie of ties) {
  if (!(tie >= 0)) throw new RangeError(`TIES: each must be >= 0 ms, got ${process.env.TIES}`);
  for (const returnAware of [false, true]) {
    const r = simulatePolicy(
      a.w,
      a.fleet,
      "prefix_aware",
      (specs) =>
        new Router(specs, {
          policy: new PrefixAwarePolicy({ tieToleranceMs: tie, returnAware }),
          blockTokens: a.w.blockTokens,
        }),
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
        returnAware,
        ttftP99Ms: r.ttftP99Ms,
        hitRate: r.hitRate,
      }),
    );
  }
}
