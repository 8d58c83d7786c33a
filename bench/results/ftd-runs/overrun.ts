// One race run of prefix_aware at each notice delay (DELAYS="0 20 20:0.5:20 …", sim/notice-delay.ts's spec;
// TIE=ms for the tie gauge): its p99, hit, and the first-token overrun its cost model learned (the RouterDO's
// prefillEndOverrunMs) — mean over the run's first tokens and at the end. Does the learned lateness take the
// delay in? An audit only (branch ft-delay).
//   npx tsx bench/results/ftd-runs/overrun.ts zipf 8 65 scoring 3 qwen3-30b-a3b-h100-vllm
import { parseNoticeDelay } from "../../../sim/notice-delay";
import type { RouterFactory, SimRouter } from "../../../sim/simulator";
import { simulatePolicy } from "../../../sim/simulator";
import { viewOf } from "../../../sim/policies";
import { loadAuditRunFromArgv, tieGaugedRouter } from "../audit-run";

const run = await loadAuditRunFromArgv({ spec: "zipf", backends: 8, load: 65, set: "scoring", seed: 3, preset: "qwen3-30b-a3b-h100-vllm" });
const delays = (process.env.DELAYS ?? "0 20 20:0.5:20 50:0.5:20").split(/\s+/).filter((s) => s !== "");
for (const spec of delays) {
  const d = parseNoticeDelay(spec);
  const seen: number[] = [];
  let router: SimRouter | undefined;
  const make: RouterFactory = (specs, readings) => {
    const r = tieGaugedRouter(run.w.blockTokens, 0)(specs, readings);
    router = r;
    return {
      route: r.route.bind(r),
      complete: r.complete.bind(r),
      firstToken(ticket, ctx) {
        r.firstToken?.(ticket, ctx);
        const o = (r.stats?.(ctx.now) as { prefillEndOverrunMs?: number } | undefined)?.prefillEndOverrunMs;
        if (o !== undefined && seen.length < 1e6) seen.push(o);
      },
    };
  };
  const fleet = { ...run.fleet, noticeDelay: d };
  const res = simulatePolicy(run.w, fleet, "prefix_aware", make, viewOf("prefix_aware"));
  const end = (router?.stats?.() as { prefillEndOverrunMs?: number } | undefined)?.prefillEndOverrunMs;
  const mean = seen.length > 0 ? seen.reduce((a, b) => a + b, 0) / seen.length : Number.NaN;
  console.log(
    JSON.stringify({
      run: `${run.spec} ${run.backends} ${run.load} ${run.set} s${run.seed} ${run.preset}`,
      tie: process.env.TIE ?? "default",
      delay: spec,
      p99: +res.ttftP99Ms.toFixed(1),
      p50: +res.ttftP50Ms.toFixed(1),
      hit: +(100 * res.hitRate).toFixed(2),
      overrunMean: +mean.toFixed(1),
      overrunEnd: end === undefined ? null : +end.toFixed(1),
    }),
  );
}
