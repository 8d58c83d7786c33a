// no-shared-prefix MoE's slowest 1% (TTFT), prefix_aware (at the tie tolerance TIE, ms; default 1) against Dynamo
// and round robin, request by request. An audit only: nothing here is used by the router or the simulator.
//   npx tsx bench/results/noshare-moe/tail-audit.ts [WORKLOAD] [BACKENDS] [LOAD] [SET] [SEED] [PRESET]
// defaults: no-shared-prefix 8 25 tuning 1 qwen3-30b-a3b-h100-vllm (the race's run: bench/sim-all.sh tuning).
// JSON=path: also writes one line per tail request of each router (for summary.ts).
//
// For every decision, before the engine sees the request, each backend's engine is copied and stepped with the
// request until its first token (sim/clairvoyant.ts placementCost, objective "ttft"; the request's true output
// length is used only for this measurement): the request's exact TTFT on every backend, and `stepWait`, the time
// until that engine's step in progress ends (the first moment the request can be scheduled). The engine's own
// timeline of the request comes from two wrapped engine-model methods (this process only): StepScheduler.enter
// (admission: the boundary whose step carries its first chunk) and EngineModel.completePrefill (the step that gave
// its first token: its duration, its decodes, the prefills it shared). TTFT = stepWait + queued (further step
// boundaries passed over: chunk budget or memory) + prefill (admission → first token).
//
// What a gateway could know of the step phase (a gauge, never a router input): the last first token each backend
// streamed back (first tokens come at step ends) and the inter-token time it learned from its own completions
// (usage's completion_tokens over first token → end). Its phase guess is s − ((now − last first token) mod s).
import { writeFileSync } from "node:fs";
import { placementCost } from "../../../sim/clairvoyant";
import { EngineModel } from "../../../sim/model/engine-model";
import { StepScheduler } from "../../../sim/model/scheduler";
import type { EngineRequest } from "../../../sim/model/types";
import { readingsOf, routerFactory, viewOf } from "../../../sim/policies";
import { type RouterFactory, type SimRouter, simulatePolicy } from "../../../sim/simulator";
import { DEFAULT_TIE_TOLERANCE_MS, PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import { loadAuditRunFromArgv, quantileOf } from "../audit-run";

const run = await loadAuditRunFromArgv({
  spec: "no-shared-prefix",
  backends: 8,
  load: 25,
  set: "tuning",
  seed: 1,
  preset: "qwen3-30b-a3b-h100-vllm",
});
const { w, fleet } = run;
const bt = w.blockTokens;
const n = w.requests.length;
const tie = process.env.TIE === undefined ? DEFAULT_TIE_TOLERANCE_MS : Number(process.env.TIE);
if (!(tie >= 0)) throw new RangeError(`TIE: must be >= 0 ms, got ${process.env.TIE}`);

// ---- engine hooks (this process only) ----
let current: "on" | "off" = "off";
let admitAt = new Float64Array(n);
interface FtStep {
  stepMs: number;
  decodes: number;
  coPrefills: number;
  coTokens: number;
  /** Of the prefills sharing the step, those that arrived before this one (queued ahead of it). */
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

interface At {
  ttft: number;
  stepWait: number;
  waiting: number;
  running: number;
  decoding: number;
  /** The router's own count of its requests in flight there (gateway-observable). */
  ours: number;
  /** prefix_aware only: the cost it gave this backend (Infinity: not a candidate), and its queue-wait term. */
  cost: number;
  queueWait: number;
  /** The router's own requests there whose first token has not come back (gateway-observable). */
  noFirstToken: number;
  /** The engine's step in progress carries a prefill chunk (engine truth). */
  prefillStep: boolean;
  /** The gateway's phase guess (see the header), ms; NaN before a first token and a completion there. */
  phaseGuess: number;
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

type Name = "prefix_aware" | "dynamo" | "round_robin";

function simulate(name: Name) {
  const recs: Rec[] = new Array(n);
  admitAt = new Float64Array(n).fill(Number.NaN);
  ftStep = new Array(n);
  const make: RouterFactory = (specs, readings, engines) => {
    if (engines === undefined) throw new Error("tail-audit: the simulator gave no engines");
    for (const e of engines) schedOwner.set((e as unknown as { scheduler: object }).scheduler, e as unknown as { t: number });
    let costs: number[] = [];
    let queues: number[] = [];
    let inner: SimRouter;
    if (name === "prefix_aware") {
      const policy = new PrefixAwarePolicy({ tieToleranceMs: tie });
      policy.costObserver = (b, t, _r, _f, cost) => {
        costs[b] = cost;
        queues[b] = t.queueWaitMs;
      };
      inner = new Router(specs, { policy, blockTokens: bt, ...readingsOf("prefix_aware", readings) });
    } else inner = routerFactory(name, bt)(specs, readings, engines);
    const scratch = engines.map((e) => new EngineModel(e.config));
    const ours = new Int32Array(specs.length);
    const noFt = new Int32Array(specs.length);
    const lastFt = new Float64Array(specs.length).fill(Number.NaN);
    const itSum = new Float64Array(specs.length);
    const itN = new Float64Array(specs.length);
    const byTicket = new Map<unknown, { i: number; b: number; ft: number }>();
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
        costs = [];
        queues = [];
        const at: At[] = engines.map((e, b) => {
          const m = e.metrics(ctx.now);
          const s = scratch[b]!.copyFrom(e);
          s.submit(er, ctx.now);
          const stepWait = s.nextEventTime() - ctx.now;
          const it = itN[b]! > 0 ? itSum[b]! / itN[b]! : Number.NaN;
          const since = ctx.now - lastFt[b]!;
          return {
            ttft: placementCost(e, scratch[b]!, er, ctx.now, "ttft"),
            stepWait,
            waiting: m.waiting,
            running: m.running,
            decoding: (e as unknown as { batch: { size: number } }).batch.size,
            ours: ours[b]!,
            noFirstToken: noFt[b]!,
            prefillStep: (e as unknown as { busy: boolean; scheduler: { chunked: unknown[] } }).busy &&
              (e as unknown as { scheduler: { chunked: unknown[] } }).scheduler.chunked.length > 0,
            cost: Number.POSITIVE_INFINITY,
            queueWait: Number.NaN,
            phaseGuess: Number.isFinite(it) && Number.isFinite(since) ? it - (since % it) : Number.NaN,
          };
        });
        current = "on";
        const out = inner.route(req, ctx);
        const b = specs.findIndex((s) => s.id === out.decision.backendId);
        for (const [j, c] of costs.entries()) if (c !== undefined) at[j]!.cost = c;
        for (const [j, q] of queues.entries()) if (q !== undefined) at[j]!.queueWait = q;
        recs[i] = { i, now: ctx.now, chosen: b, reason: out.decision.reason, realized: Number.NaN, admit: Number.NaN, at };
        ours[b]!++;
        noFt[b]!++;
        byTicket.set(out.ticket, { i, b, ft: Number.NaN });
        return out;
      },
      firstToken(ticket, ctx) {
        const o = byTicket.get(ticket)!;
        o.ft = ctx.now;
        noFt[o.b]!--;
        lastFt[o.b] = Number.isNaN(lastFt[o.b]!) ? ctx.now : Math.max(lastFt[o.b]!, ctx.now);
        inner.firstToken?.(ticket, ctx);
      },
      complete(ticket, outcome, ctx) {
        const o = byTicket.get(ticket)!;
        byTicket.delete(ticket);
        recs[o.i]!.realized = outcome.ttftMs ?? Number.NaN;
        ours[o.b]!--;
        const out = w.requests[o.i]!.outputTokens;
        if (out > 1 && Number.isFinite(o.ft)) {
          itSum[o.b]! += (ctx.now - o.ft) / (out - 1);
          itN[o.b]!++;
        }
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
const pct = (xs: readonly number[], p: number) => quantileOf(xs, p / 100);
const share = (xs: readonly boolean[]) => `${((100 * xs.filter(Boolean).length) / Math.max(1, xs.length)).toFixed(0)}%`;
const corr = (a: readonly number[], b: readonly number[]) => {
  const ma = mean(a);
  const mb = mean(b);
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let k = 0; k < a.length; k++) {
    sab += (a[k]! - ma) * (b[k]! - mb);
    saa += (a[k]! - ma) ** 2;
    sbb += (b[k]! - mb) ** 2;
  }
  return sab / Math.sqrt(saa * sbb);
};

const runs = { prefix_aware: simulate("prefix_aware"), dynamo: simulate("dynamo"), round_robin: simulate("round_robin") };
console.log(
  `${run.spec} ${run.set} seed ${run.seed}, ${n} requests, ${run.backends} backends @ ${run.load}, ${run.preset}; prefix_aware at TIE ${tie} ms`,
);
console.log(
  `TTFT p99 (report): ${Object.entries(runs)
    .map(([k, r]) => `${k} ${f1(r.res.ttftP99Ms)} ms (p50 ${f1(r.res.ttftP50Ms)})`)
    .join(", ")}`,
);
const tailOf = (recs: readonly Rec[]) => [...recs.keys()].sort((a, b) => recs[b]!.realized - recs[a]!.realized).slice(0, Math.ceil(n / 100));
const lines: object[] = [];

console.log(
  "\n| router | tail n (≥ ms) | TTFT | = step in progress | + queued (boundaries passed over) | + prefill (admission → first token) | first-token step: ms / decodes / other prefills (arrived earlier) | exact TTFT here (no later arrivals) | best backend's exact TTFT | regret > 10 ms | best backend's step in progress | chosen's step carries a prefill (one of ours without its first token there) | a candidate had neither | reasons |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
for (const [name, r] of Object.entries(runs)) {
  const t = tailOf(r.recs);
  const R = t.map((i) => r.recs[i]!);
  const F = t.map((i) => r.ft[i]!);
  const A = R.map((x) => x.at[x.chosen]!);
  const best = R.map((x) => x.at.reduce((m, a) => (a.ttft < m.ttft ? a : m)));
  const queued = R.map((x, k) => x.admit - A[k]!.stepWait);
  const reasons = new Map<string, number>();
  for (const x of R) reasons.set(x.reason, (reasons.get(x.reason) ?? 0) + 1);
  console.log(
    `| ${name} | ${t.length} (≥ ${f1(R[R.length - 1]!.realized)}) | ${f1(mean(R.map((x) => x.realized)))} | ${f1(mean(A.map((a) => a.stepWait)))} | ${f1(mean(queued))} (> 1 ms: ${share(queued.map((q) => q > 1))}) | ${f1(mean(R.map((x) => x.realized - x.admit)))} | ${f1(mean(F.map((f) => f.stepMs)))} / ${f1(mean(F.map((f) => f.decodes)))} / ${mean(F.map((f) => f.coPrefills)).toFixed(2)} (${mean(F.map((f) => f.earlier)).toFixed(2)}) | ${f1(mean(A.map((a) => a.ttft)))} | ${f1(mean(best.map((a) => a.ttft)))} | ${share(R.map((x, k) => A[k]!.ttft - best[k]!.ttft > 10))} | ${f1(mean(best.map((a) => a.stepWait)))} | ${share(A.map((a) => a.prefillStep))} (${share(A.map((a) => a.noFirstToken > 0))}) | ${share(R.map((x) => x.at.some((a) => !a.prefillStep && a.noFirstToken === 0)))} | ${[...reasons].map(([a, b]) => `${a} ${b}`).join(", ")} |`,
  );
  for (const [k, i] of t.entries())
    lines.push({
      router: name,
      tie,
      seed: run.seed,
      rank: k + 1,
      i,
      prompt: w.requests[i]!.promptTokens,
      realized: R[k]!.realized,
      stepWait: A[k]!.stepWait,
      queued: queued[k],
      prefill: R[k]!.realized - R[k]!.admit,
      ...F[k],
      exact: A[k]!.ttft,
      bestExact: best[k]!.ttft,
      reason: R[k]!.reason,
      chosenOurs: A[k]!.ours,
      prefillStep: A[k]!.prefillStep,
      noFirstToken: A[k]!.noFirstToken,
      minOurs: Math.min(...R[k]!.at.map((a) => a.ours)),
      chosenDecoding: A[k]!.decoding,
      minDecoding: Math.min(...R[k]!.at.map((a) => a.decoding)),
    });
}

// Whole run: where every router's requests wait, by percentile.
console.log("\n| router | TTFT p50 / p99 | step in progress mean / p99 | queued mean / p99 | prefill mean / p99 | first-token step decodes mean / p99 | chosen had fewest of the router's own in flight | chosen had fewest decoding | chosen's step carries a prefill | chosen had one of ours without its first token |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
for (const [name, r] of Object.entries(runs)) {
  const R = r.recs.slice(Math.floor(n / 10));
  const F = R.map((x) => r.ft[x.i]!);
  const A = R.map((x) => x.at[x.chosen]!);
  const q = R.map((x, k) => x.admit - A[k]!.stepWait);
  const p = R.map((x) => x.realized - x.admit);
  console.log(
    `| ${name} | ${f1(pct(R.map((x) => x.realized), 50))} / ${f1(pct(R.map((x) => x.realized), 99))} | ${f1(mean(A.map((a) => a.stepWait)))} / ${f1(pct(A.map((a) => a.stepWait), 99))} | ${f1(mean(q))} / ${f1(pct(q, 99))} | ${f1(mean(p))} / ${f1(pct(p, 99))} | ${f1(mean(F.map((f) => f.decodes)))} / ${f1(pct(F.map((f) => f.decodes), 99))} | ${share(R.map((x) => x.at[x.chosen]!.ours === Math.min(...x.at.map((a) => a.ours))))} | ${share(R.map((x) => x.at[x.chosen]!.decoding === Math.min(...x.at.map((a) => a.decoding))))} | ${share(A.map((a) => a.prefillStep))} | ${share(A.map((a) => a.noFirstToken > 0))} |`,
  );
}

// prefix_aware: does its cost see the better backend? And could the gateway's phase guess have?
{
  const r = runs.prefix_aware;
  const t = tailOf(r.recs);
  const R = r.recs.slice(Math.floor(n / 10));
  const within = (x: Rec, ms: number) => {
    const c = x.at[x.chosen]!.cost;
    return x.at.filter((a) => a.cost <= c + ms).length;
  };
  const tieBand = (ids: readonly Rec[]) =>
    ids.map((x) => {
      const c = x.at[x.chosen]!.cost;
      const best = x.at.reduce((m, a) => (a.ttft < m.ttft ? a : m));
      return best.cost - c;
    });
  const T = t.map((i) => r.recs[i]!);
  const gap = tieBand(T);
  console.log(
    `\nprefix_aware's tail: the best backend's cost − the chosen's: p50 ${f1(pct(gap, 50))} ms, p90 ${f1(pct(gap, 90))} ms; within the tie tolerance ${share(gap.map((g) => g <= tie))}; candidates within 5 / 10 ms of the chosen's cost: ${f1(mean(T.map((x) => within(x, 5))))} / ${f1(mean(T.map((x) => within(x, 10))))} (whole run ${f1(mean(R.map((x) => within(x, 5))))} / ${f1(mean(R.map((x) => within(x, 10))))})`,
  );
  // Phase guess against the true step in progress, within each decision (deviations from the decision's mean).
  const g: number[] = [];
  const s: number[] = [];
  for (const x of R) {
    const ok = x.at.filter((a) => Number.isFinite(a.phaseGuess));
    if (ok.length < 2) continue;
    const mg = mean(ok.map((a) => a.phaseGuess));
    const ms = mean(ok.map((a) => a.stepWait));
    for (const a of ok) {
      g.push(a.phaseGuess - mg);
      s.push(a.stepWait - ms);
    }
  }
  // Rescoring on the same trajectory: among candidates within 5 ms of the chosen's cost, pick the smallest
  // phase guess (the guess's best use); against the truth, the smallest true step in progress (an upper bound).
  const pickBy = (x: Rec, f: (a: At) => number) => {
    const c = x.at[x.chosen]!.cost;
    const cands = x.at.filter((a) => a.cost <= c + 5 && Number.isFinite(f(a)));
    return cands.length === 0 ? x.at[x.chosen]! : cands.reduce((m, a) => (f(a) < f(m) ? a : m));
  };
  const ex = (ids: readonly Rec[], f?: (a: At) => number) => mean(ids.map((x) => (f ? pickBy(x, f) : x.at[x.chosen]!).ttft));
  console.log(
    `the gateway's phase guess vs the true step in progress, within decisions: correlation ${corr(g, s).toFixed(3)} (${g.length} backend-decisions); ` +
      `exact TTFT mean as chosen ${f1(ex(R))} ms (tail ${f1(ex(T))}), re-picked within 5 ms of cost by the phase guess ${f1(ex(R, (a) => a.phaseGuess))} (tail ${f1(ex(T, (a) => a.phaseGuess))}), by the true step in progress ${f1(ex(R, (a) => a.stepWait))} (tail ${f1(ex(T, (a) => a.stepWait))})`,
  );
}

// prefix_aware: decisions that land on a backend with a prefill of ours whose first token has not come back.
{
  const r = runs.prefix_aware;
  const t = new Set(tailOf(r.recs));
  for (const [label, R] of [
    ["whole run", r.recs.slice(Math.floor(n / 10))],
    ["slowest 1%", r.recs.filter((x) => t.has(x.i))],
  ] as const) {
    const L = R.filter((x) => x.at[x.chosen]!.noFirstToken > 0);
    const q = L.map((x) => x.at[x.chosen]!.queueWait);
    const left = L.map((x) => x.at[x.chosen]!.stepWait);
    const free = L.filter((x) => x.at.some((a) => a.noFirstToken === 0 && a.cost < Number.POSITIVE_INFINITY));
    const gapFree = free.map((x) => {
      const c = x.at[x.chosen]!.cost;
      return Math.min(...x.at.filter((a) => a.noFirstToken === 0).map((a) => a.cost)) - c;
    });
    console.log(
      `prefix_aware, ${label}: chosen backend had a prefill of ours without its first token at ${L.length} of ${R.length} decisions; ` +
        `the ledger's queue wait there: 0 at ${share(q.map((v) => v <= 0))}, mean ${f1(mean(q))} ms; the engine's step in progress there p50 ${f1(pct(left, 50))} ms, mean ${f1(mean(left))} ms; ` +
        `a candidate without one existed at ${share(L.map((x) => free.includes(x)))}, its cost above the chosen's by p50 ${f1(pct(gapFree, 50))} / p90 ${f1(pct(gapFree, 90))} ms; exact TTFT chosen − best such candidate mean ${f1(mean(free.map((x) => x.at[x.chosen]!.ttft - Math.min(...x.at.filter((a) => a.noFirstToken === 0).map((a) => a.ttft)))))} ms`,
    );
  }
}

// Dynamo vs prefix_aware: the same requests in each other's tail.
{
  const a = tailOf(runs.prefix_aware.recs);
  const b = tailOf(runs.dynamo.recs);
  const sb = new Set(b);
  console.log(
    `\ntails' overlap prefix_aware/dynamo: ${a.filter((i) => sb.has(i)).length} of ${a.length}; prefix_aware's tail under dynamo: mean ${f1(mean(a.map((i) => runs.dynamo.recs[i]!.realized)))} ms; dynamo's tail under prefix_aware: mean ${f1(mean(b.map((i) => runs.prefix_aware.recs[i]!.realized)))} ms`,
  );
  const big = (ids: readonly number[]) => `${f1(mean(ids.map((i) => w.requests[i]!.promptTokens)))} tok (run mean ${f1(mean(w.requests.map((x) => x.promptTokens)))})`;
  console.log(`prompt size: prefix_aware's tail ${big(a)}, dynamo's tail ${big(b)}`);
}

if (process.env.JSON) writeFileSync(process.env.JSON, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`, { flag: "a" });
