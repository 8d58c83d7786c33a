// A diagnostic, not a gate: which backend prefix_aware chose for each request of one run, with the
// checkout's learned margin and with it zeroed, and how many decisions asked a margin above 0. Run it in two
// checkouts (per-backend statistic on main, the fleet's on this branch) and compare the files with
// decisions-diff.ts. Request k is the k-th routed (0-based). Branch-only: it reads the policy's private
// margin through a cast.
//   MOONCAKE_TRACE=… npx tsx bench/results/pooled-margin/decisions.ts mooncake 8 2 scoring 1 qwen3-30b-a3b-h100-vllm OUT.json
import { writeFileSync } from "node:fs";
import type { EstimateMargin } from "../../../src/routing/estimate-margin";
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import { viewOf } from "../../../sim/policies";
import { simulatePolicy } from "../../../sim/simulator";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING } from "../audit-run";

const { w, fleet, extra } = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const out = extra[0];
if (out === undefined) throw new Error("usage: decisions.ts WORKLOAD BACKENDS LOAD SET SEED PRESET OUT.json");

/** One run: the backend chosen per request (arrival order: every request is routed once, no second client). */
function run(zeroMargin: boolean) {
  const chosen: string[] = [];
  let asked = 0;
  let positive = 0;
  // The request being placed when a margin above 0 was first asked: how soon the statistic has evidence.
  let firstPositive = -1;
  const r = simulatePolicy(
    w,
    fleet,
    "prefix_aware",
    (specs) => {
      const policy = new PrefixAwarePolicy();
      const m = (policy as unknown as { margin: EstimateMargin }).margin;
      const inner = m.marginTokens.bind(m);
      m.marginTokens = (i: number, tail: number) => {
        const v = zeroMargin ? 0 : inner(i, tail);
        asked++;
        if (v > 0) positive++;
        if (v > 0 && firstPositive < 0) firstPositive = chosen.length;
        return v;
      };
      const router = new Router(specs, { policy, blockTokens: w.blockTokens });
      const route = router.route.bind(router);
      router.route = (req, ctx) => {
        const o = route(req, ctx);
        chosen.push(o.decision.backendId);
        return o;
      };
      return router;
    },
    viewOf("prefix_aware"),
  );
  return { p99: r.ttftP99Ms, asked, positive, firstPositive, chosen };
}

const withMargin = run(false);
const zeroed = run(true);
writeFileSync(out, JSON.stringify({ withMargin, zeroed }));
const differ = withMargin.chosen.filter((b, k) => b !== zeroed.chosen[k]).length;
console.log(
  `p99 ${withMargin.p99.toFixed(0)} ms (margin zeroed ${zeroed.p99.toFixed(0)} ms); margins asked ${withMargin.asked}, > 0: ${withMargin.positive} (first at request ${withMargin.firstPositive}); requests whose backend differs from the zeroed run: ${differ} of ${withMargin.chosen.length}`,
);
