// @ts-nocheck -- runs on branch mt-tail only (PrefixAwareOptions.holdAmongHolders)
// Multi-turn MoE's and Zipf 8B's slowest 1% (TTFT) with the first-token hold in place (branch mt-tail): where our
// tail waits, against Dynamo on the same requests, and what the gateway knew at each decision. An audit only:
// nothing here is used by the router or the simulator. Extends noshare-moe/tail-audit.ts (same engine hooks, same
// exact-TTFT probe per backend) with the hold's state on every backend, memory and lost history.
//   npx tsx bench/results/mtt-audit/tail-hold.ts WORKLOAD BACKENDS LOAD SET SEED PRESET
//   (REQUESTS=10000 for multi-turn as bench/sim-all.sh runs it; TIE=ms prefix_aware's tie tolerance, default 1;
//    ROUTERS="prefix_aware dynamo" the routers to run; JSON=path appends one line per tail request; HOLD_AMONG=1
//    the branch's variant, PrefixAwareOptions.holdAmongHolders.)
//
// For every decision each backend's engine is copied and stepped with the request to its first token
// (sim/clairvoyant.ts placementCost, "ttft"; the true output length is used only for this measurement): the exact
// TTFT on every backend and `stepWait`, the rest of the step in progress. TTFT = stepWait + queued (step
// boundaries passed over: the chunk budget or memory) + prefill (admission → first token).
//
// The hold on a backend b at the decision (prefix_aware's cost model, read before the request is booked):
//   plain = the ledger's queue wait; hold = the wait counting our unanswered prefills to their end + the learned
//   overrun (unansweredQueueWaitMs); charged = the queue term the policy used.
//   "held": hold > plain and charged it; "exempt": hold > plain, b holds the prompt's longest match, not charged;
//   "lapsed": a prefill of ours there without its first token, but its predicted end + overrun has passed (hold =
//   plain); "none": no unanswered prefill of ours there.
import { writeFileSync } from "node:fs";
import { placementCost } from "../../../sim/clairvoyant";
import { EngineModel } from "../../../sim/model/engine-model";
import { StepScheduler } from "../../../sim/model/scheduler";
import type { EngineRequest } from "../../../sim/model/types";
import { readingsOf, routerFactory, viewOf } from "../../../sim/policies";
import { type RouterFactory, type SimRouter, simulatePolicy } from "../../../sim/simulator";
import { DEFAULT_TIE_TOLERANCE_MS, PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import { type EngineInside, loadAuditRunFromArgv, quantileOf } from "../audit-run";

const run = await loadAuditRunFromArgv({
  spec: "multi-turn",
  backends: 8,
  load: 45,
  set: "tuning",
  seed: 1,
  preset: "qwen3-30b-a3b-h100-vllm",
});
const { w, fleet } = run;
const bt = w.blockTokens;
const n = w.requests.length;
const tie = process.env.TIE === undefined ? DEFAULT_TIE_TOLERANCE_MS : Number(process.env.TIE);
if (!(tie >= 0)) throw new RangeError(`TIE: must be >= 0 ms, got ${process.env.TIE}`);
type Name = "prefix_aware" | "dynamo" | "llmd" | "round_robin";
const routers = (process.env.ROUTERS ?? "prefix_aware dynamo").split(/\s+/).filter(Boolean) as Name[];

// ---- engine hooks (this process only), as noshare-moe/tail-audit.ts ----
let current: "on" | "off" = "off";
let admitAt = new Float64Array(n);
interface FtStep {
  stepMs: number;
  decodes: number;
  coPrefills: number;
  coTokens: number;
  earlier: number;
}
let ftStep: (FtStep | undefined)[] = new Array(n);
const schedOwner = new WeakMap<object, { t: number }>();
{
  const proto = StepScheduler.prototype as unknown as { enter: (r: { id: string }, hit: number, need: number) => void };
  const enter = proto.enter;
  proto.enter = function (this: object, r, hit, need) {
    if (current === "on" && /^\d+$/.test(r.id)) {
      const i = Number(r.id);
      if (Number.isNaN(admitAt[i]!)) admitAt[i] = schedOwner.get(this)?.t ?? Number.NaN;
    }
    enter.call(this, r, hit, need);
  };
  const ep = EngineModel.prototype as unknown as { completePrefill: (r: { id: string; generated: number }) => void };
  const cp = ep.completePrefill;
  ep.completePrefill = function (this: unknown, r) {
    if (current === "on" && /^\d+$/.test(r.id) && r.generated === 0) {
      const e = this as {
        runA: number;
        batch: { size: number };
        scheduler: { chunked: { id: string; computed: number; target: number }[] };
      };
      const i = Number(r.id);
      const co = e.scheduler.chunked.filter((x) => x.id !== r.id);
      ftStep[i] = {
        stepMs: e.runA,
        decodes: e.batch.size,
        coPrefills: co.length,
        coTokens: co.reduce((a, x) => a + x.target, 0),
        earlier: co.filter((x) => /^\d+$/.test(x.id) && Number(x.id) < i).length,
      };
    }
    cp.call(this, r);
  };
}

type Hold = "held" | "exempt" | "lapsed" | "none";
interface At {
  ttft: number;
  stepWait: number;
  /** Blocks of the prompt the engine holds (engine truth). */
  held: number;
  /** Free KV tokens (engine truth). */
  free: number;
  prefillStep: boolean;
  /** The router's own requests there without a first token (gateway-observable). */
  noFirstToken: number;
  cost: number;
  plain: number;
  hold: number;
  charged: number;
  memoryWait: number;
  state: Hold;
}
interface Rec {
  i: number;
  now: number;
  chosen: number;
  reason: string;
  realized: number;
  admit: number;
  at: At[];
}

function simulate(name: Name) {
  const recs: Rec[] = new Array(n);
  admitAt = new Float64Array(n).fill(Number.NaN);
  ftStep = new Array(n);
  const make: RouterFactory = (specs, readings, engines) => {
    if (engines === undefined) throw new Error("tail-hold: the simulator gave no engines");
    for (const e of engines) schedOwner.set((e as unknown as { scheduler: object }).scheduler, e as unknown as { t: number });
    let obs: { cost: number; plain: number; hold: number; charged: number; memoryWait: number }[] = [];
    let now = 0;
    let inner: SimRouter;
    if (name === "prefix_aware") {
      const policy = new PrefixAwarePolicy({ tieToleranceMs: tie, holdAmongHolders: process.env.HOLD_AMONG === "1" });
      policy.costObserver = (b, t, _r, _f, cost) => {
        obs[b] = {
          cost,
          plain: policy.model.queueWaitMs(b, now),
          hold: policy.model.unansweredQueueWaitMs(b, now),
          charged: t.queueWaitMs,
          memoryWait: t.memoryWaitMs,
        };
      };
      inner = new Router(specs, { policy, blockTokens: bt, ...readingsOf("prefix_aware", readings) });
    } else inner = routerFactory(name, bt)(specs, readings, engines);
    const scratch = engines.map((e) => new EngineModel(e.config));
    const noFt = new Int32Array(specs.length);
    const byTicket = new Map<unknown, { i: number; b: number; ft: boolean }>();
    let next = 0;
    return {
      route(req, ctx) {
        const i = next++;
        const r = w.requests[i]!;
        const er: EngineRequest = {
          id: `probe-${i}`,
          blocks: w.promptBlocks[i]!,
          promptTokens: r.promptTokens,
          outputTokens: Math.max(1, r.outputTokens),
        };
        obs = [];
        now = ctx.now;
        const at: At[] = engines.map((e, b) => {
          e.metrics(ctx.now);
          const x = e as unknown as EngineInside & { busy: boolean; scheduler: { chunked: unknown[] } };
          const s = scratch[b]!.copyFrom(e);
          s.submit(er, ctx.now);
          const stepWait = s.nextEventTime() - ctx.now;
          return {
            ttft: placementCost(e, scratch[b]!, er, ctx.now, "ttft"),
            stepWait,
            held: x.pool.longestPrefix(w.promptBlocks[i]!),
            free: x.pool.numFree * bt,
            prefillStep: x.busy && x.scheduler.chunked.length > 0,
            noFirstToken: noFt[b]!,
            cost: Number.POSITIVE_INFINITY,
            plain: Number.NaN,
            hold: Number.NaN,
            charged: Number.NaN,
            memoryWait: Number.NaN,
            state: noFt[b]! > 0 ? "lapsed" : "none",
          };
        });
        current = "on";
        const out = inner.route(req, ctx);
        const b = specs.findIndex((s) => s.id === out.decision.backendId);
        for (const [j, o] of obs.entries()) {
          if (o === undefined) continue;
          const a = at[j]!;
          Object.assign(a, o);
          a.state = o.hold > o.plain ? (o.charged >= o.hold ? "held" : "exempt") : a.noFirstToken > 0 ? "lapsed" : "none";
        }
        recs[i] = { i, now: ctx.now, chosen: b, reason: out.decision.reason, realized: Number.NaN, admit: Number.NaN, at };
        noFt[b]!++;
        byTicket.set(out.ticket, { i, b, ft: false });
        return out;
      },
      firstToken(ticket, ctx) {
        const o = byTicket.get(ticket)!;
        if (!o.ft) noFt[o.b]!--;
        o.ft = true;
        inner.firstToken?.(ticket, ctx);
      },
      complete(ticket, outcome, ctx) {
        const o = byTicket.get(ticket)!;
        byTicket.delete(ticket);
        if (!o.ft) noFt[o.b]!--;
        recs[o.i]!.realized = outcome.ttftMs ?? Number.NaN;
        inner.complete(ticket, outcome, ctx);
      },
      ...(inner.stats ? { stats: inner.stats.bind(inner) } : {}),
    } satisfies SimRouter;
  };
  const res = simulatePolicy(w, fleet, name, make, viewOf(name));
  current = "off";
  for (let i = 0; i < n; i++) recs[i]!.admit = admitAt[i]! - recs[i]!.now;
  return { recs, res, ft: ftStep };
}

const f1 = (x: number) => x.toFixed(1);
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const share = (xs: readonly boolean[]) => `${((100 * xs.filter(Boolean).length) / Math.max(1, xs.length)).toFixed(0)}%`;

/** The wait that dominates a request's TTFT over its own prefill, first that applies. */
function cause(x: Rec): string {
  const a = x.at[x.chosen]!;
  const blocks = w.promptBlocks[x.i]!.length;
  const best = Math.max(...x.at.map((y) => y.held));
  if (best - a.held >= 4 && best - a.held >= 0.1 * blocks) return "history lost";
  const queued = x.admit - a.stepWait;
  const uncached = w.requests[x.i]!.promptTokens - a.held * bt;
  if (queued > 0.1 * x.realized) return uncached > a.free ? "memory" : "queue";
  if (a.stepWait > 0.1 * x.realized) return a.prefillStep ? "prefill step in progress" : "decode step in progress";
  return "own prefill";
}

const runs = Object.fromEntries(routers.map((r) => [r, simulate(r)])) as Record<Name, ReturnType<typeof simulate>>;
console.log(
  `${run.spec} ${run.set} seed ${run.seed}, ${n} requests, ${run.backends} backends @ ${run.load}, ${run.preset}; prefix_aware at TIE ${tie} ms`,
);
console.log(`TTFT p99 (report): ${routers.map((k) => `${k} ${f1(runs[k].res.ttftP99Ms)} ms (p50 ${f1(runs[k].res.ttftP50Ms)})`).join(", ")}`);
const tailOf = (recs: readonly Rec[]) => [...recs.keys()].sort((a, b) => recs[b]!.realized - recs[a]!.realized).slice(0, Math.ceil(n / 100));
const lines: object[] = [];
const pa = runs.prefix_aware;
const peer = routers.find((r) => r !== "prefix_aware");

console.log(
  "\n| router | tail n (≥ ms) | TTFT = step in progress + queued + prefill | first-token step ms / decodes / other prefills | exact TTFT here / best backend | regret > 10 ms | by cause | chosen's hold state | chosen holds the longest match | reasons |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
for (const name of routers) {
  const r = runs[name];
  const t = tailOf(r.recs);
  const R = t.map((i) => r.recs[i]!);
  const F = R.map((x) => r.ft[x.i]).map((f) => f ?? { stepMs: Number.NaN, decodes: Number.NaN, coPrefills: Number.NaN, coTokens: 0, earlier: 0 });
  const A = R.map((x) => x.at[x.chosen]!);
  const best = R.map((x) => x.at.reduce((m, a) => (a.ttft < m.ttft ? a : m)));
  const queued = R.map((x, k) => x.admit - A[k]!.stepWait);
  const count = (xs: string[]) => {
    const m = new Map<string, number>();
    for (const s of xs) m.set(s, (m.get(s) ?? 0) + 1);
    return [...m].sort((a, b) => b[1] - a[1]).map(([a, b]) => `${a} ${b}`).join(", ");
  };
  const longest = R.map((x) => x.at[x.chosen]!.held > 0 && x.at[x.chosen]!.held === Math.max(...x.at.map((a) => a.held)));
  console.log(
    `| ${name} | ${t.length} (≥ ${f1(R[R.length - 1]!.realized)}) | ${f1(mean(R.map((x) => x.realized)))} = ${f1(mean(A.map((a) => a.stepWait)))} + ${f1(mean(queued))} + ${f1(mean(R.map((x) => x.realized - x.admit)))} | ${f1(mean(F.map((f) => f.stepMs)))} / ${f1(mean(F.map((f) => f.decodes)))} / ${mean(F.map((f) => f.coPrefills)).toFixed(2)} | ${f1(mean(A.map((a) => a.ttft)))} / ${f1(mean(best.map((a) => a.ttft)))} | ${share(R.map((_, k) => A[k]!.ttft - best[k]!.ttft > 10))} | ${count(R.map(cause))} | ${name === "prefix_aware" ? count(A.map((a) => a.state)) : `unanswered prefill of its own there ${share(A.map((a) => a.noFirstToken > 0))}`} | ${share(longest)} | ${count(R.map((x) => x.reason))} |`,
  );
  for (const [k, i] of t.entries()) {
    const o = peer !== undefined && name === "prefix_aware" ? runs[peer].recs[i]! : undefined;
    lines.push({
      router: name,
      spec: run.spec,
      set: run.set,
      tie,
      seed: run.seed,
      rank: k + 1,
      i,
      prompt: w.requests[i]!.promptTokens,
      cached: A[k]!.held * bt,
      bestHeld: Math.max(...R[k]!.at.map((a) => a.held)) * bt,
      realized: R[k]!.realized,
      stepWait: A[k]!.stepWait,
      queued: queued[k],
      prefill: R[k]!.realized - R[k]!.admit,
      ...F[k],
      exact: A[k]!.ttft,
      bestExact: best[k]!.ttft,
      cause: cause(R[k]!),
      reason: R[k]!.reason,
      state: A[k]!.state,
      longest: longest[k],
      noFirstToken: A[k]!.noFirstToken,
      prefillStep: A[k]!.prefillStep,
      ...(o ? { peerTtft: o.realized, peerCause: cause(o), peerSameBackendAsHolder: o.at[o.chosen]!.held === Math.max(...o.at.map((a) => a.held)) } : {}),
    });
  }
}

// prefix_aware's tail by the chosen backend's hold state: how long it waited, what the best backend would have
// given, and whether that best backend was free of unanswered prefills and off the history (what the gateway saw).
{
  const t = tailOf(pa.recs);
  console.log(
    "\n| prefix_aware tail, chosen's hold state | n | TTFT mean | step in progress | queued | exact here − best backend | best backend: holds the longest match / has an unanswered prefill of ours / its cost − chosen's (p50) | same requests under the peer: TTFT mean |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const st of ["held", "exempt", "lapsed", "none"] as Hold[]) {
    const R = t.map((i) => pa.recs[i]!).filter((x) => x.at[x.chosen]!.state === st);
    if (R.length === 0) continue;
    const A = R.map((x) => x.at[x.chosen]!);
    const B = R.map((x) => x.at.reduce((m, a) => (a.ttft < m.ttft ? a : m)));
    const longestOf = (x: Rec, a: At) => a.held > 0 && a.held === Math.max(...x.at.map((y) => y.held));
    console.log(
      `| ${st} | ${R.length} | ${f1(mean(R.map((x) => x.realized)))} | ${f1(mean(A.map((a) => a.stepWait)))} | ${f1(mean(R.map((x, k) => x.admit - A[k]!.stepWait)))} | ${f1(mean(R.map((_, k) => A[k]!.ttft - B[k]!.ttft)))} | ${share(R.map((x, k) => longestOf(x, B[k]!)))} / ${share(B.map((b) => b.noFirstToken > 0))} / ${f1(quantileOf(R.map((_, k) => B[k]!.cost - A[k]!.cost), 0.5))} | ${peer ? f1(mean(R.map((x) => runs[peer].recs[x.i]!.realized))) : "-"} |`,
    );
  }
  // The whole run past its first tenth: how often each state is chosen, and what it costs against the best.
  const W = pa.recs.slice(Math.floor(n / 10));
  const parts = (["held", "exempt", "lapsed", "none"] as Hold[]).map((st) => {
    const R = W.filter((x) => x.at[x.chosen]!.state === st);
    return `${st} ${share(W.map((x) => x.at[x.chosen]!.state === st))} (exact − best ${f1(mean(R.map((x) => x.at[x.chosen]!.ttft - Math.min(...x.at.map((a) => a.ttft)))))} ms)`;
  });
  console.log(`\nprefix_aware, every decision past the first tenth, chosen's hold state: ${parts.join(", ")}`);
  const ex = W.filter((x) => x.at[x.chosen]!.state === "exempt");
  const exBetter = ex.filter((x) => x.at.some((a) => a.noFirstToken === 0 && a.ttft < x.at[x.chosen]!.ttft - 10));
  console.log(
    `exempt decisions: ${ex.length}; a backend without an unanswered prefill was > 10 ms faster (exact) at ${exBetter.length}; the hold's extra wait there (hold − plain) p50 ${f1(quantileOf(ex.map((x) => x.at[x.chosen]!.hold - x.at[x.chosen]!.plain), 0.5))} ms; step in progress p50 ${f1(quantileOf(ex.map((x) => x.at[x.chosen]!.stepWait), 0.5))} ms`,
  );
}

// The exemption's reach: at an exempt decision, how many backends held the prompt's longest match (engine truth),
// whether another longest holder had no unanswered prefill of ours (the request could have stayed on its cache
// without the step wait), and that holder's exact TTFT against the chosen's. "system prompt only": the longest
// match is no more than multi-turn's 1,024-token system prompt and a block (every warm backend holds it).
{
  const t = new Set(tailOf(pa.recs));
  const W = pa.recs.slice(Math.floor(n / 10));
  for (const [label, R0] of [
    ["whole run", W],
    ["slowest 1%", pa.recs.filter((x) => t.has(x.i))],
  ] as const) {
    const R = R0.filter((x) => x.at[x.chosen]!.state === "exempt");
    const holders = R.map((x) => {
      const L = Math.max(...x.at.map((a) => a.held));
      return x.at.map((a, j) => ({ a, j })).filter(({ a }) => a.held === L);
    });
    const other = R.map((x, k) => holders[k]!.filter(({ a, j }) => j !== x.chosen && a.noFirstToken === 0 && a.cost < Number.POSITIVE_INFINITY));
    const withOther = R.filter((_, k) => other[k]!.length > 0);
    const gain = R.map((x, k) => (other[k]!.length > 0 ? x.at[x.chosen]!.ttft - Math.min(...other[k]!.map(({ a }) => a.ttft)) : Number.NaN)).filter((g) => !Number.isNaN(g));
    const costGap = R.map((x, k) => (other[k]!.length > 0 ? Math.min(...other[k]!.map(({ a }) => a.cost)) - x.at[x.chosen]!.cost : Number.NaN)).filter((g) => !Number.isNaN(g));
    const sysOnly = R.filter((x) => Math.max(...x.at.map((a) => a.held)) * bt <= 1024 + bt && holders[R.indexOf(x)]!.length >= run.backends - 1);
    console.log(
      `exempt, ${label}: ${R.length} decisions; longest match held by ${f1(mean(holders.map((h) => h.length)))} backends on the mean (by all ${run.backends}: ${share(holders.map((h) => h.length === run.backends))}); ` +
        `another longest holder without an unanswered prefill (a candidate): ${withOther.length} (${share(R.map((_, k) => other[k]!.length > 0))}), its exact TTFT lower by mean ${f1(mean(gain))} ms (p50 ${f1(quantileOf(gain, 0.5))}), its cost above the chosen's p50 ${f1(quantileOf(costGap, 0.5))} ms; ` +
        `longest match ≤ the 1,024-token system prompt + a block and on ≥ ${run.backends - 1} backends: ${sysOnly.length}`,
    );
  }
}

if (peer !== undefined) {
  const a = tailOf(pa.recs);
  const b = tailOf(runs[peer].recs);
  const sb = new Set(b);
  console.log(
    `\ntails' overlap prefix_aware/${peer}: ${a.filter((i) => sb.has(i)).length} of ${a.length}; prefix_aware's tail under ${peer}: mean ${f1(mean(a.map((i) => runs[peer].recs[i]!.realized)))} ms; ${peer}'s tail under prefix_aware: mean ${f1(mean(b.map((i) => pa.recs[i]!.realized)))} ms`,
  );
  // The p99 if each of our tail's requests had had the best backend's exact TTFT (no later arrivals moved): an
  // optimistic bound on what fixing our tail's picks alone would buy.
  const fixed = pa.recs.map((x) => (a.includes(x.i) ? Math.min(x.realized, Math.min(...x.at.map((y) => y.ttft))) : x.realized));
  const peerP99 = runs[peer].res.ttftP99Ms;
  console.log(
    `our p99 ${f1(pa.res.ttftP99Ms)} ms (${f1((100 * pa.res.ttftP99Ms) / peerP99 - 100)}% vs ${peer}); our tail re-picked at its best exact TTFT: p99 ${f1(quantileOf(fixed, 0.99))} ms (${f1((100 * quantileOf(fixed, 0.99)) / peerP99 - 100)}%)`,
  );
}

if (process.env.JSON) writeFileSync(process.env.JSON, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`, { flag: "a" });
