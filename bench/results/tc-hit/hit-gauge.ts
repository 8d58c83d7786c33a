// Hit gauge: prefix_aware's tuning hit rate (and p99) with the tie tolerance moved (TIE, ms), a perturbation of
// no meaning that shows how far the hit of a Mooncake group moves by chance; and, with DUMP=FILE, each
// request's cached tokens as the engine served them (for a request-by-request diff of two trees' runs,
// hit-diff.ts). Run from the tree whose policy is measured. Audit only.
//   MOONCAKE_TRACE=… TIE=1 npx tsx bench/results/tc-hit/hit-gauge.ts mooncake 16 4 tuning 1 qwen3-30b-a3b-h100-vllm
import { writeFileSync } from "node:fs";
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import { viewOf } from "../../../sim/policies";
import { simulatePolicy } from "../../../sim/simulator";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING } from "../audit-run";

const { w, fleet } = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const tie = Number(process.env.TIE ?? 1);
if (!(tie >= 0)) throw new RangeError(`TIE: must be >= 0 ms, got ${process.env.TIE}`);
const cached = new Float64Array(w.requests.length).fill(Number.NaN);
const r = simulatePolicy(
  w,
  fleet,
  "prefix_aware",
  (specs) => new Router(specs, { policy: new PrefixAwarePolicy({ tieToleranceMs: tie }), blockTokens: w.blockTokens }),
  viewOf("prefix_aware"),
  undefined,
  {
    done(i, _backend, cachedTokens) {
      cached[i] = cachedTokens;
    },
  },
);
console.log(`tie ${tie} ms: hit ${(r.hitRate * 100).toFixed(2)}%, p99 ${r.ttftP99Ms.toFixed(0)} ms`);
if (process.env.DUMP !== undefined) writeFileSync(process.env.DUMP, JSON.stringify(Array.from(cached)));
