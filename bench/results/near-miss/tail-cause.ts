// Issue #12's near misses on the 8B Mooncake groups: what each request in prefix_aware's slowest 1% waited on,
// what the best peer did with the same request (same seed), and whether our ledger predicted the wait.
// Audit only (nothing here is used by the router or the simulator); engine internals read through casts, as
// moe8-audit/tail-audit.ts does.
//   MOONCAKE_TRACE=... npx tsx bench/results/near-miss/tail-cause.ts mooncake 16 5 tuning 1 llama-3.1-8b-h100-vllm dynamo
// Classes (first that applies), for a request of our tail on its chosen engine e:
//   history lost (spill | fallback | priced away): another engine held ≥ 4 blocks and ≥ 10% of the prompt more than e
//     at the decision (engine truth), by the decision's reason;
//   memory: admission waited > 10% of TTFT and at the decision the input exceeded e's free KV;
//   queue: admission waited > 10% of TTFT (behind prefill already on e: ours, as the whole fleet is ours here);
//   engine prefill: none of the above: admitted at once, nothing better cached anywhere; TTFT is the engine's
//     chunked prefill of the uncached prompt (alongside the decodes it runs).
// The peer (7th argument) may also be the clairvoyant reference (sim/clairvoyant.ts, objective ttft):
// `clairvoyant` uncapped, `clairvoyant_capped` within the 1.25 request cap (branch moe-tail). With REQUESTS=10000
// for multi-turn, as bench/sim-all.sh runs it:
//   REQUESTS=10000 npx tsx bench/results/near-miss/tail-cause.ts multi-turn 8 45 tuning 2 qwen3-30b-a3b-h100-vllm clairvoyant
import { CLAIRVOYANT_VIEW, clairvoyantFactory } from "../../../sim/clairvoyant";
import type { CostTerms } from "../../../src/routing/cost-model";
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import type { EngineModel } from "../../../sim/model/engine-model";
import { StepScheduler } from "../../../sim/model/scheduler";
import { routerFactory, type SimPolicyName, viewOf } from "../../../sim/policies";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { type RouterFactory, simulatePolicy } from "../../../sim/simulator";
import { type EngineInside, loadAuditRunFromArgv, quantileOf } from "../audit-run";

const run = await loadAuditRunFromArgv({
  spec: "mooncake",
  backends: 16,
  load: 5,
  set: "tuning",
  seed: 1,
  preset: "llama-3.1-8b-h100-vllm",
});
const peer = (run.extra[0] ?? "dynamo") as SimPolicyName | "clairvoyant" | "clairvoyant_capped";
const { w, fleet } = run;
const bt = w.blockTokens;
const n = w.requests.length;

let admitAt = new Float64Array(n);
let owner = new WeakMap<object, EngineModel>();
const proto = StepScheduler.prototype as unknown as { enter: (r: { id: string }, hit: number, need: number) => void };
const enter = proto.enter;
proto.enter = function (this: object, r, hit, need) {
  const i = Number(r.id);
  if (Number.isNaN(admitAt[i]!)) admitAt[i] = (owner.get(this) as unknown as { t: number } | undefined)?.t ?? Number.NaN;
  enter.call(this, r, hit, need);
};

// Every prefill-carrying step of every engine (branch moe-tail): start, end, prefill tokens, the requests in it,
// read by wrapping EngineModel.plan as burst-tail/step-records.ts does. Per backend, in time order.
interface Step {
  start: number;
  end: number;
  tokens: number;
  ids: number[];
}
let steps: Step[][] = [];
function hookSteps(engines: readonly EngineModel[]) {
  if (steps.length > 0) return;
  steps = engines.map(() => []);
  engines.forEach((e, b) => {
    const x = e as unknown as {
      runStart: number;
      runEnd: number;
      scheduler: { chunked: { id: string }[] };
      plan(prefillTokens: number): void;
    };
    const plan = x.plan.bind(x);
    x.plan = (prefillTokens: number) => {
      plan(prefillTokens);
      if (x.scheduler.chunked.length === 0) return;
      steps[b]!.push({ start: x.runStart, end: x.runEnd, tokens: prefillTokens, ids: x.scheduler.chunked.map((c) => Number(c.id)) });
    };
  });
}

interface Rec {
  b: number;
  reason: string;
  /** The prefill step in progress on the chosen engine at arrival, and the step that made the first token. */
  atArrival?: Step;
  first?: Step;
  held: number[]; // blocks of the prompt each engine holds at the decision
  free: number[]; // free KV tokens per engine
  waiting: number[]; // waiting-queue tokens per engine
  used: number[]; // KV tokens in use per engine (what its decodes read each step, and more)
  ttft: number;
  admit: number;
  cached: number;
  terms?: CostTerms;
  minOther?: number;
}

function simulate(name: SimPolicyName | "clairvoyant" | "clairvoyant_capped") {
  owner = new WeakMap();
  steps = [];
  admitAt = new Float64Array(n).fill(Number.NaN);
  const recs: Rec[] = new Array(n);
  const cv = name === "clairvoyant" || name === "clairvoyant_capped";
  let make: RouterFactory = cv
    ? clairvoyantFactory(w, "ttft", undefined, name === "clairvoyant_capped" ? 1.25 : undefined)
    : routerFactory(name, bt);
  let view = cv ? CLAIRVOYANT_VIEW : viewOf(name);
  const terms: CostTerms[] = [];
  const costs: number[] = [];
  if (name === "prefix_aware") {
    const policy = new PrefixAwarePolicy();
    policy.costObserver = (b, t, _r, _f, cost) => {
      terms[b] = { ...t };
      costs[b] = cost;
    };
    const pick = policy.pick.bind(policy);
    policy.pick = (req, f, ctx) => {
      terms.length = 0;
      costs.length = 0;
      return pick(req, f, ctx);
    };
    make = (specs) => new Router(specs, { policy, blockTokens: bt });
    view = GATEWAY_VIEW;
  }
  const res = simulatePolicy(w, fleet, cv ? `${name}_ttft` : name, make, view, undefined, {
    routed(i, b, d, engines) {
      hookSteps(engines);
      for (const e of engines) owner.set((e as unknown as { scheduler: object }).scheduler, e);
      const now = w.requests[i]!.arrivalMs;
      const held: number[] = [];
      const free: number[] = [];
      const waiting: number[] = [];
      const used: number[] = [];
      for (const e of engines) {
        e.metrics(now);
        const x = e as unknown as EngineInside;
        held.push(x.pool.longestPrefix(w.promptBlocks[i]!));
        free.push(x.pool.numFree * bt);
        used.push((x.pool.numBlocks - x.pool.numFree) * bt);
        const s = x.scheduler;
        waiting.push(s.waiting.slice(s.waitHead).reduce((a, q) => a + q.promptTokens, 0));
      }
      const others = costs.filter((c, j) => j !== b && c !== undefined);
      recs[i] = {
        b,
        reason: d.reason,
        held,
        free,
        waiting,
        used,
        ttft: Number.NaN,
        admit: Number.NaN,
        cached: 0,
        ...(terms[b] ? { terms: terms[b], minOther: others.length ? Math.min(...others) : Number.NaN } : {}),
      };
    },
    done(i, _b, c, ttft) {
      recs[i]!.ttft = ttft;
      recs[i]!.cached = c;
    },
  });
  for (let i = 0; i < n; i++) recs[i]!.admit = admitAt[i]! - w.requests[i]!.arrivalMs;
  for (const list of steps)
    for (const st of list) for (const i of st.ids) recs[i]!.first = st; // the last step that carried it finished its prompt
  // The prefill step in progress on the chosen backend at arrival (binary search: the last step started by then).
  for (let i = 0; i < n; i++) {
    const r = recs[i]!;
    const a = w.requests[i]!.arrivalMs;
    const list = steps[r.b] ?? [];
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]!.start <= a) lo = mid + 1;
      else hi = mid;
    }
    const st = list[lo - 1];
    if (st !== undefined && a < st.end) r.atArrival = st;
  }
  return { recs, res };
}

function classify(r: Rec, i: number): string {
  const blocks = w.promptBlocks[i]!.length;
  const best = Math.max(...r.held);
  const lost = best - r.held[r.b]!;
  if (lost >= 4 && lost >= 0.1 * blocks)
    return `history lost (${r.reason === "spill" ? "spill" : r.reason === "fallback" ? "fallback" : "priced away"})`;
  if (r.admit > 0.1 * r.ttft) return w.requests[i]!.promptTokens - r.held[r.b]! * bt > r.free[r.b]! ? "memory" : "queue";
  return "engine prefill";
}

const pa = simulate("prefix_aware");
const pr = simulate(peer);
const ms = (x: number) => `${Math.round(x)}`;
const k = (x: number) => `${(x / 1000).toFixed(1)}k`;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const tailOf = (recs: Rec[]) => [...recs.keys()].sort((a, b) => recs[b]!.ttft - recs[a]!.ttft).slice(0, Math.ceil(n / 100));
const tPA = tailOf(pa.recs);
const tPR = tailOf(pr.recs);

console.log(`${run.spec} ${run.backends}b ×${run.load} ${run.set} seed ${run.seed} ${run.preset}: ${n} requests, blocks of ${bt}`);
console.log(
  `TTFT p99: prefix_aware ${ms(pa.res.ttftP99Ms)} ms, ${peer} ${ms(pr.res.ttftP99Ms)} ms (${((100 * pa.res.ttftP99Ms) / pr.res.ttftP99Ms - 100).toFixed(1)}%); hit ${(100 * pa.res.hitRate).toFixed(1)}% / ${(100 * pr.res.hitRate).toFixed(1)}%; tails ${tPA.length}, in both ${tPA.filter((i) => tPR.includes(i)).length}`,
);

for (const [name, me, other, t] of [
  ["prefix_aware", pa, pr, tPA],
  [peer, pr, pa, tPR],
] as const) {
  const by = new Map<string, number[]>();
  for (const i of t) {
    const c = classify(me.recs[i]!, i);
    by.set(c, [...(by.get(c) ?? []), i]);
  }
  console.log(`\n== ${name}'s slowest 1% by cause (TTFT ≥ ${ms(me.recs[t[t.length - 1]!]!.ttft)} ms)`);
  for (const [c, ids] of [...by].sort((a, b) => b[1].length - a[1].length)) {
    const R = ids.map((i) => me.recs[i]!);
    const O = ids.map((i) => other.recs[i]!);
    let line =
      `  ${c}: ${ids.length}; prompt mean ${k(mean(ids.map((i) => w.requests[i]!.promptTokens)))}, cached ${k(mean(R.map((r) => r.cached)))}, ` +
      `best cached anywhere ${k(mean(R.map((r) => Math.max(...r.held) * bt)))}; TTFT mean ${ms(mean(R.map((r) => r.ttft)))} = admission wait ${ms(mean(R.map((r) => r.admit)))} + prefill ${ms(mean(R.map((r) => r.ttft - r.admit)))} ms` +
      ` | same requests under ${name === peer ? "prefix_aware" : peer}: TTFT mean ${ms(mean(O.map((r) => r.ttft)))} ms, wait ${ms(mean(O.map((r) => r.admit)))}, cached ${k(mean(O.map((r) => r.cached)))}, in its own tail ${ids.filter((i) => (name === peer ? tPA : tPR).includes(i)).length}`;
    const oc = new Map<string, number>();
    for (const i of ids) oc.set(classify(other.recs[i]!, i), (oc.get(classify(other.recs[i]!, i)) ?? 0) + 1);
    line += `\n    the same requests' class under ${name === peer ? "prefix_aware" : peer}: ${[...oc].map(([c, m]) => `${c} ${m}`).join(", ")}`;
    if (name === "prefix_aware") {
      const T = R.map((r) => r.terms).filter((x) => x !== undefined);
      line += `\n    ledger predicted: start ${ms(mean(T.map((x) => x.startMs)))} (queue ${ms(mean(T.map((x) => x.queueWaitMs)))}, memory ${ms(mean(T.map((x) => x.memoryWaitMs)))}) + prefill ${ms(mean(T.map((x) => x.prefillMs)))} = ${ms(mean(T.map((x) => x.startMs + x.prefillMs)))} ms against TTFT ${ms(mean(R.map((r) => r.ttft)))} (start ${ms(mean(R.map((r) => r.admit)))}); predicted ÷ actual p50 ${quantileOf(R.filter((r) => r.terms).map((r) => (r.terms!.startMs + r.terms!.prefillMs) / r.ttft), 0.5).toFixed(2)}`;
    }
    console.log(line);
  }
}

/** One request's steps: the prefill step in progress at arrival (ms left, tokens) and the first-token step (ms, tokens, others before/after). */
function stepsOf(r: Rec, i: number) {
  const a = w.requests[i]!.arrivalMs;
  const at = r.atArrival ? `in step ${ms(r.atArrival.end - a)} left/${k(r.atArrival.tokens)}` : "no prefill step";
  const f = r.first;
  if (!f) return at;
  const o = f.ids.filter((j) => j !== i);
  return `${at}, 1st ${ms(f.end - f.start)} ms/${k(f.tokens)} +${o.filter((j) => w.requests[j]!.arrivalMs <= a).length}b ${o.filter((j) => w.requests[j]!.arrivalMs > a).length}a`;
}
console.log(
  `\n== prefix_aware's slowest 1%, each: req | prompt k, cached k (best anywhere k) | reason b | TTFT = wait + prefill ms | ledger start + prefill ms, cost vs cheapest other | ${peer}: TTFT, b, cached k, wait`,
);
for (const i of tPA) {
  const r = pa.recs[i]!;
  const o = pr.recs[i]!;
  const t = r.terms;
  console.log(
    `#${i} ${classify(r, i)} | p ${k(w.requests[i]!.promptTokens)} c ${k(r.cached)} (${k(Math.max(...r.held) * bt)}) | ${r.reason} b${r.b} | ${ms(r.ttft)} = ${ms(r.admit)} + ${ms(r.ttft - r.admit)} | ` +
      (t ? `L ${ms(t.startMs)} + ${ms(t.prefillMs)}, ${ms(t.total)} vs ${ms(r.minOther ?? Number.NaN)}` : "L -") +
      ` | ${peer} ${ms(o.ttft)} b${o.b} c ${k(o.cached)} (${k(Math.max(...o.held) * bt)}) w ${ms(o.admit)} ${classify(o, i)}` +
      ` | steps: ours ${stepsOf(r, i)}; ${peer} ${stepsOf(o, i)}`,
  );
}

// Any router's floor on these requests: the uncached prompt of the longest prefix any engine held, at the run's
// measured prefill speed of admitted-at-once cold requests (tokens per ms, prefix_aware's own run).
const fast = [...pa.recs.keys()].filter((i) => pa.recs[i]!.admit < 20 && w.requests[i]!.promptTokens > 32768);
const rate = mean(fast.map((i) => (w.requests[i]!.promptTokens - pa.recs[i]!.cached) / (pa.recs[i]!.ttft - pa.recs[i]!.admit)));
console.log(`\nprefill speed of admitted-at-once prompts > 32k: ${rate.toFixed(1)} tok/ms (n ${fast.length})`);

// The engine's own floor per request: its prompt past the longest prefix any engine held at the decision, alone
// on an idle engine (chunks of maxBatchedTokens, each step's base cost, the preset's prefill speed). The p99 rank
// of our TTFT against the floor of the same request says how much of the tail any placement could still remove.
const { enginePreset } = await import("../../../sim/model/presets");
const { stepBudget } = await import("../../../sim/model/engine-config");
const cfg = enginePreset(run.preset);
const budget = stepBudget(cfg);
// Each chunk's step from the engine's own step cost with nothing decoding (sim/model/step-time.ts): on a dense
// preset that is the step base + the chunk at the prefill speed, as this audit first had it; on a MoE it also
// carries the experts' weights every prefill step reads (moe-tail: 24.7 ms of the Qwen3 MoE's step).
const { StepCost } = await import("../../../sim/model/step-time");
const stepCost = new StepCost(cfg);
const floorOf = (i: number, r: Rec) => {
  const un = Math.max(1, w.requests[i]!.promptTokens - Math.max(...r.held) * bt);
  const full = Math.floor(un / budget);
  return full * stepCost.stepMs(0, 0, budget) + (un > full * budget ? stepCost.stepMs(0, 0, un - full * budget) : 0);
};
for (const [name, me, t] of [
  ["prefix_aware", pa, tPA],
  [peer, pr, tPR],
] as const) {
  const ex = t.map((i) => me.recs[i]!.ttft / floorOf(i, me.recs[i]!) - 1);
  const last = t[t.length - 1]!;
  console.log(
    `${name}'s slowest 1%: TTFT over its idle-engine floor p50 ${(100 * quantileOf(ex, 0.5)).toFixed(1)}%, mean ${(100 * mean(ex)).toFixed(1)}%; ` +
      `the p99 request (#${last}): TTFT ${ms(me.recs[last]!.ttft)} ms, floor ${ms(floorOf(last, me.recs[last]!))} ms`,
  );
}
// The whole run's p99 if every request took max(its floor, ...) — the floors' own p99: no router goes below it.
const floors = [...pa.recs.keys()].map((i) => floorOf(i, pa.recs[i]!));
console.log(
  `p99 of the idle-engine floors (prefix_aware's decisions' best cache anywhere): ${ms(quantileOf(floors, 0.99))} ms = ${((100 * quantileOf(floors, 0.99)) / pr.res.ttftP99Ms - 100).toFixed(1)}% against ${peer}'s p99`,
);

// How much of our tail's excess over the floor the decodes' context could explain, and an upper bound on what
// placing every request on the engine with the least KV in use would save: its steps × decodeStepPerKTokenMs ×
// (KV in use on the chosen engine − the least on any engine), the later load on that engine ignored.
const perK = cfg.decodeStepPerKTokenMs ?? 0;
const saving = (i: number, r: Rec) => {
  const un = Math.max(1, w.requests[i]!.promptTokens - r.cached);
  return (Math.ceil(un / budget) * perK * (r.used[r.b]! - Math.min(...r.used))) / 1000;
};
const T = tPA.map((i) => pa.recs[i]!);
console.log(
  `our tail: TTFT − floor mean ${ms(mean(tPA.map((i) => pa.recs[i]!.ttft - floorOf(i, pa.recs[i]!))))} ms; KV in use at the decision: chosen ${k(mean(T.map((r) => r.used[r.b]!)))}, least on any engine ${k(mean(T.map((r) => Math.min(...r.used))))}, fleet mean ${k(mean(T.map((r) => mean(r.used))))}; ` +
    `saving on the least-KV engine mean ${ms(mean(tPA.map((i) => saving(i, pa.recs[i]!))))} ms`,
);
const cf = [...pa.recs.keys()].map((i) => pa.recs[i]!.ttft - saving(i, pa.recs[i]!));
console.log(
  `counterfactual p99, every request less that saving: ${ms(quantileOf(cf, 0.99))} ms = ${((100 * quantileOf(cf, 0.99)) / pr.res.ttftP99Ms - 100).toFixed(1)}% against ${peer} (ours ${((100 * pa.res.ttftP99Ms) / pr.res.ttftP99Ms - 100).toFixed(1)}%)`,
);
// The history our tail lost: the run's p99 had each such request of our tail taken the peer's TTFT where lower.
const cfh = [...pa.recs.keys()].map((i) =>
  tPA.includes(i) && classify(pa.recs[i]!, i).startsWith("history") ? Math.min(pa.recs[i]!.ttft, pr.recs[i]!.ttft) : pa.recs[i]!.ttft,
);
console.log(
  `counterfactual p99, our tail's lost-history requests at min(ours, ${peer}'s): ${ms(quantileOf(cfh, 0.99))} ms = ${((100 * quantileOf(cfh, 0.99)) / pr.res.ttftP99Ms - 100).toFixed(1)}% against ${peer}`,
);

// The steps around each tail request (branch moe-tail): was a prefill step in progress on the chosen engine when
// it arrived (how much of it was left, its prefill tokens), and what else shared the step that made its first
// token: the prompt tokens of that step past the request's own uncached ones, and the requests in it routed
// before its decision (the gateway knew them) or after (it could not).
function stepLine(me: { recs: Rec[] }, ids: readonly number[]) {
  const R = ids.map((i) => me.recs[i]!);
  const inStep = ids.filter((i) => me.recs[i]!.atArrival !== undefined);
  const left = inStep.map((i) => me.recs[i]!.atArrival!.end - w.requests[i]!.arrivalMs);
  const own = (i: number) => Math.max(0, w.requests[i]!.promptTokens - me.recs[i]!.cached);
  const others = ids.map((i) => (me.recs[i]!.first?.ids ?? []).filter((j) => j !== i));
  const before = ids.map((i, x) => others[x]!.filter((j) => w.requests[j]!.arrivalMs <= w.requests[i]!.arrivalMs));
  const after = ids.map((i, x) => others[x]!.filter((j) => w.requests[j]!.arrivalMs > w.requests[i]!.arrivalMs));
  const coldOf = (j: number) => me.recs[j]!.cached < w.requests[j]!.promptTokens / 2;
  const firstMs = R.map((r) => (r.first ? r.first.end - r.first.start : Number.NaN)).filter((x) => !Number.isNaN(x));
  return (
    `arrived in a prefill step on the chosen engine ${inStep.length} of ${ids.length} (left of it mean ${ms(mean(left))} ms, its prefill ${k(mean(inStep.map((i) => me.recs[i]!.atArrival!.tokens)))} tok); ` +
    `first-token step ${ms(mean(firstMs))} ms, prefill ${k(mean(R.map((r) => r.first?.tokens ?? 0)))} tok of which own uncached ${k(mean(ids.map(own)))}; ` +
    `others in it routed before ${mean(before.map((x) => x.length)).toFixed(1)} (cold ${mean(before.map((x) => x.filter(coldOf).length)).toFixed(1)}), after ${mean(after.map((x) => x.length)).toFixed(1)} (cold ${mean(after.map((x) => x.filter(coldOf).length)).toFixed(1)})`
  );
}
console.log("\n== the steps around each tail (arrival's step in progress on the chosen engine; the first-token step)");
console.log(`prefix_aware's slowest 1%: ${stepLine(pa, tPA)}`);
console.log(`  the same requests under ${peer}: ${stepLine(pr, tPA)}`);
console.log(`${peer}'s slowest 1%: ${stepLine(pr, tPR)}`);
console.log(`  the same requests under prefix_aware: ${stepLine(pa, tPR)}`);
const all = [...pa.recs.keys()];
console.log(`every request, prefix_aware: ${stepLine(pa, all)}`);
console.log(`every request, ${peer}: ${stepLine(pr, all)}`);

// Why the ledger missed the step in progress (branch moe-tail): for each request of our tail that arrived in a
// prefill step on its engine, the ledger's own booking of that step's requests (their decision's predicted start
// + prefill, from their arrival) against the step's real end, and the step's length against the ledger's
// predicted prefill of the tokens in it (the engine's step has a fixed part the ledger's rate does not carry).
{
  const rows = tPA
    .filter((i) => pa.recs[i]!.atArrival !== undefined)
    .map((i) => {
      const st = pa.recs[i]!.atArrival!;
      const a = w.requests[i]!.arrivalMs;
      const ends = st.ids
        .filter((j) => pa.recs[j]!.terms !== undefined)
        .map((j) => w.requests[j]!.arrivalMs + pa.recs[j]!.terms!.startMs + pa.recs[j]!.terms!.prefillMs);
      const booked = ends.length ? Math.max(...ends) : Number.NaN;
      const predPrefill = st.ids
        .filter((j) => pa.recs[j]!.terms !== undefined)
        .reduce((x, j) => x + pa.recs[j]!.terms!.prefillMs, 0);
      return { left: st.end - a, booked: booked - a, late: st.end - booked, len: st.end - st.start, predPrefill, queue: pa.recs[i]!.terms?.queueWaitMs ?? Number.NaN };
    });
  const q = (f: (r: (typeof rows)[number]) => number) => ms(quantileOf(rows.map(f).filter((x) => !Number.isNaN(x)), 0.5));
  console.log(
    `\n== our tail's step in progress, p50 over ${rows.length}: left at arrival ${q((r) => r.left)} ms; the ledger's booking of its requests ended ${q((r) => r.booked)} ms from arrival ` +
      `(the ledger's queue at the decision ${q((r) => r.queue)} ms); the step ended ${q((r) => r.late)} ms past that booking; ` +
      `step length ${q((r) => r.len)} ms against the ledger's prefill of its requests ${q((r) => r.predPrefill)} ms; booking ended before arrival ${rows.filter((r) => r.booked <= 0).length} of ${rows.length}`,
  );
}
