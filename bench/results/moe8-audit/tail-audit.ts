// Mooncake MoE 8's slowest 1% (TTFT), prefix_aware against Dynamo, request by request (audit only: nothing here
// is used by the router or the simulator). For each request of either tail: the decision's reason, the engine
// state at the decision (waiting queue, free KV against the input it needs), what prefix_aware's ledger predicted
// (cost terms: queue wait, memory wait, prefill) against what the engine did (admission time = queue/memory wait,
// first token − admission = prefill under chunking, preemptions), and the same request under the other router.
//   MOONCAKE_TRACE=... npx tsx bench/results/moe8-audit/tail-audit.ts mooncake 8 2 tuning 1 qwen3-30b-a3b-h100-vllm
// Engine internals are read through casts and one wrapped scheduler method (StepScheduler.enter, admission).
import type { CostTerms } from "../../../src/routing/cost-model";
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import type { EngineModel } from "../../../sim/model/engine-model";
import { StepScheduler } from "../../../sim/model/scheduler";
import { routerFactory, viewOf } from "../../../sim/policies";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { type RouterFactory, simulatePolicy } from "../../../sim/simulator";
import { type EngineInside, loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING, quantileOf } from "../audit-run";

const run = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const { w, fleet } = run;
const bt = w.blockTokens;
const n = w.requests.length;
const show = Number(process.env.SHOW ?? 30);

// Admission times: StepScheduler.enter, first call per request (a resumed request's later calls are counted).
let schedOwner = new WeakMap<object, EngineModel>();
let admitAt = new Float64Array(n);
let admits = new Int32Array(n);
const reqObj: ({ preempted: number; hitBlocks: number } | undefined)[] = new Array(n);
const proto = StepScheduler.prototype as unknown as { enter: (r: { id: string }, hit: number, need: number) => void };
const enter = proto.enter;
proto.enter = function (this: object, r, hit, need) {
  const i = Number(r.id);
  const e = schedOwner.get(this) as unknown as { t: number } | undefined;
  if (admits[i] === 0) admitAt[i] = e?.t ?? Number.NaN;
  admits[i]!++;
  reqObj[i] = r as unknown as { preempted: number; hitBlocks: number };
  enter.call(this, r, hit, need);
};

// Completion times: EngineModel.finish (a request's KV comes back there).
let finishAt = new Float64Array(n);
{
  const ep = (await import("../../../sim/model/engine-model")).EngineModel.prototype as unknown as {
    finish: (r: { id: string }) => void;
  };
  const finish = ep.finish;
  ep.finish = function (this: { t: number }, r) {
    finishAt[Number(r.id)] = this.t;
    finish.call(this, r);
  };
}

interface At {
  waiting: number;
  waitingTokens: number;
  free: number;
  needInput: number;
  headBlocked: boolean;
  prefilling: number;
  /** The request holding the most KV blocks there: its index, prompt tokens, phase, true answer, hint. */
  big?: { i: number; held: number; phase: string; prompt: number; out: number; hint: number | undefined };
}
function at(e: EngineModel, i: number, now: number): At {
  e.metrics(now);
  const x = e as unknown as EngineInside;
  const s = x.scheduler;
  const queue = s.waiting.slice(s.waitHead) as unknown as { promptTokens: number; blocks: readonly number[] }[];
  const cached = x.pool.longestPrefix(w.promptBlocks[i]!);
  const head = queue[0];
  const headNeed = head ? Math.ceil(head.promptTokens / bt) - x.pool.longestPrefix(head.blocks) : 0;
  let big: At["big"];
  for (const r of (x as unknown as { byId: Map<string, { id: string; held: number; phase: string }> }).byId.values())
    if (big === undefined || r.held > big.held) {
      const j = Number(r.id);
      big = { i: j, held: r.held, phase: r.phase, prompt: w.requests[j]!.promptTokens, out: w.requests[j]!.outputTokens, hint: w.maxTokens[j] };
    }
  return {
    ...(big ? { big } : {}),
    waiting: queue.length,
    waitingTokens: queue.reduce((a, q) => a + q.promptTokens, 0),
    free: x.pool.numFree * bt,
    needInput: (Math.ceil(w.requests[i]!.promptTokens / bt) - cached) * bt,
    headBlocked: head !== undefined && headNeed > x.pool.numFree,
    prefilling: s.admitted,
  };
}
const startsNow = (a: At) => a.waiting === 0 && a.needInput <= a.free;

interface Rec {
  reason: string;
  backend: number;
  at: At[];
  ttft: number;
  admit: number;
  preempted: number;
  cached: number;
  terms?: { queue: number; memory: number; least: number; prefill: number; total: number };
  /** prefix_aware, chosen backend, before this request: the ledger's KV (heldTokens) and its slots' expected ends against the true ends. */
  ledger?: { held: number; decode: number; slots: { i: number; kv: number; answer: number; expEnd: number; prefillEnd: number }[] };
  minOther?: number;
}

function simulate(name: "prefix_aware" | "dynamo") {
  schedOwner = new WeakMap();
  admitAt = new Float64Array(n).fill(Number.NaN);
  finishAt = new Float64Array(n).fill(Number.NaN);
  admits = new Int32Array(n);
  reqObj.fill(undefined);
  const recs: Rec[] = new Array(n);
  let make: RouterFactory = routerFactory(name, bt);
  let view = viewOf(name);
  const terms: CostTerms[] = [];
  const costs: number[] = [];
  let model: PrefixAwarePolicy["model"] | undefined;
  const slotOf = new WeakMap<object, number>();
  let ledgerBefore: Rec["ledger"][] = [];
  if (name === "prefix_aware") {
    const policy = new PrefixAwarePolicy();
    model = policy.model;
    policy.costObserver = (b, t, _r, _f, cost) => {
      terms[b] = { ...t };
      costs[b] = cost;
    };
    const pick = policy.pick.bind(policy);
    policy.pick = (req, f, ctx) => {
      terms.length = 0;
      costs.length = 0;
      const m = policy.model;
      ledgerBefore = f.backends.map((_, j) => ({
        held: m.heldTokens(j),
        decode: m.decodeMs(j),
        slots: m.hasExpectedEnds(j)
          ? m.openSlots(j).map((sl) => ({
              i: slotOf.get(sl) ?? -1,
              kv: sl.kvTokens,
              answer: sl.answerTokens,
              expEnd: ctx.now + m.expectedEndMs(j, sl, ctx.now),
              prefillEnd: sl.end,
            }))
          : [],
      }));
      return pick(req, f, ctx);
    };
    make = (specs) => new Router(specs, { policy, blockTokens: bt });
    view = GATEWAY_VIEW;
  }
  const res = simulatePolicy(w, fleet, name, make, view, undefined, {
    routed(i, b, d, engines) {
      for (const e of engines) schedOwner.set((e as unknown as { scheduler: object }).scheduler, e);
      const now = w.requests[i]!.arrivalMs;
      const t = terms[b];
      if (model) for (const sl of model.openSlots(b)) if (!slotOf.has(sl) && sl.at === now) slotOf.set(sl, i);
      const others = costs.filter((c, j) => j !== b && c !== undefined);
      recs[i] = {
        reason: d.reason,
        backend: b,
        at: engines.map((e) => at(e, i, now)),
        ttft: Number.NaN,
        admit: Number.NaN,
        preempted: 0,
        cached: 0,
        ...(model && ledgerBefore[b] ? { ledger: ledgerBefore[b] } : {}),
        ...(t
          ? {
              terms: {
                queue: t.queueWaitMs,
                memory: t.memoryWaitMs,
                least: t.leastWaitMs,
                prefill: t.prefillMs,
                total: costs[b]!,
              },
              minOther: others.length ? Math.min(...others) : Number.NaN,
            }
          : {}),
      };
    },
    done(i, _b, c, ttft) {
      recs[i]!.ttft = ttft;
      recs[i]!.cached = c;
    },
  });
  for (let i = 0; i < n; i++) {
    recs[i]!.admit = admitAt[i]! - w.requests[i]!.arrivalMs;
    recs[i]!.preempted = reqObj[i]?.preempted ?? 0;
  }
  return { recs, res, finish: Float64Array.from(finishAt) };
}

const pa = simulate("prefix_aware");
const dy = simulate("dynamo");
const s = (x: number) => `${(x / 1000).toFixed(2)}`;
const k = (x: number) => `${(x / 1000).toFixed(1)}k`;
const pct = (p: number, xs: number[]) => quantileOf(xs, p / 100);
const share = (xs: boolean[]) => `${((100 * xs.filter(Boolean).length) / Math.max(1, xs.length)).toFixed(0)}%`;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const tailOf = (recs: Rec[]) =>
  [...recs.keys()].sort((a, b) => recs[b]!.ttft - recs[a]!.ttft).slice(0, Math.ceil(n / 100));
const tPA = tailOf(pa.recs);
const tDY = tailOf(dy.recs);
const long = (i: number) => w.requests[i]!.promptTokens >= 65536;

console.log(`${run.spec} ${run.set} seed ${run.seed}, ${n} requests, ${run.backends} backends ×${run.load}, ${run.preset}`);
console.log(
  `TTFT p99 (report): prefix_aware ${s(pa.res.ttftP99Ms)} s, dynamo ${s(dy.res.ttftP99Ms)} s (${((100 * pa.res.ttftP99Ms) / dy.res.ttftP99Ms - 100).toFixed(1)}%); preemptions ${pa.res.preemptions} / ${dy.res.preemptions}`,
);
console.log(`tails: ${tPA.length} requests each; in both: ${tPA.filter((i) => tDY.includes(i)).length}`);

for (const [name, r, t, o] of [
  ["prefix_aware", pa, tPA, dy],
  ["dynamo", dy, tDY, pa],
] as const) {
  console.log(`\n== ${name}'s slowest 1% (TTFT ≥ ${s(r.recs[t[t.length - 1]!]!.ttft)} s)`);
  const reasons = new Map<string, number>();
  for (const i of t) reasons.set(r.recs[i]!.reason, (reasons.get(r.recs[i]!.reason) ?? 0) + 1);
  console.log(`  reasons: ${[...reasons].map(([a, b]) => `${a} ${b}`).join(", ")}`);
  for (const [label, ids] of [
    ["prompt ≥ 64k", t.filter(long)],
    ["prompt < 64k", t.filter((i) => !long(i))],
  ] as const) {
    if (ids.length === 0) continue;
    const R = ids.map((i) => r.recs[i]!);
    const A = R.map((x) => x.at[x.backend]!);
    console.log(
      `  ${label}: ${ids.length}; TTFT mean ${s(mean(R.map((x) => x.ttft)))} s = engine wait before admission ${s(mean(R.map((x) => x.admit)))} + prefill to first token ${s(mean(R.map((x) => x.ttft - x.admit)))}; ` +
        `preempted ${R.filter((x) => x.preempted > 0).length}; at the decision: could not start at once ${share(A.map((a) => !startsNow(a)))}, ` +
        `input above free KV ${share(A.map((a) => a.needInput > a.free))}, behind a KV-blocked head ${share(A.map((a) => a.headBlocked))}, waiting p50 ${pct(50, A.map((a) => a.waiting))} (${k(pct(50, A.map((a) => a.waitingTokens)))} tok); ` +
        `another engine could start it at once ${share(R.map((x) => !startsNow(x.at[x.backend]!) && x.at.some((a, j) => j !== x.backend && startsNow(a))))}; ` +
        `under the other router: TTFT mean ${s(mean(ids.map((i) => o.recs[i]!.ttft)))} s, wait ${s(mean(ids.map((i) => o.recs[i]!.admit)))} s`,
    );
    if (name === "prefix_aware") {
      const T = R.map((x) => x.terms).filter((x) => x !== undefined);
      console.log(
        `    ledger predicted (${T.length} priced): start mean ${s(mean(T.map((x) => Math.max(x.queue, x.memory, x.least))))} s (queue ${s(mean(T.map((x) => x.queue)))}, memory ${s(mean(T.map((x) => x.memory)))}, head ${s(mean(T.map((x) => x.least)))}), prefill ${s(mean(T.map((x) => x.prefill)))} s, cost ${s(mean(T.map((x) => x.total)))} s`,
      );
    }
  }
}

// Which requests make the p99 difference: the slowest 1% by rank, side by side.
console.log("\n== rank by rank (TTFT s): prefix_aware's k-th slowest vs dynamo's k-th slowest; prompt k-tokens");
for (let q = 0; q < Math.min(tPA.length, 61); q += 6) {
  const a = tPA[q]!;
  const b = tDY[q]!;
  console.log(
    `  #${q + 1}: PA ${s(pa.recs[a]!.ttft)} (req ${a}, ${k(w.requests[a]!.promptTokens)}, ${pa.recs[a]!.reason}) | DY ${s(dy.recs[b]!.ttft)} (req ${b}, ${k(w.requests[b]!.promptTokens)})`,
  );
}

console.log(
  `\n== prefix_aware's slowest ${show}: req, TTFT PA (DY) s, prompt (gateway's) k, cached PA/DY k, out (max_tokens) | reason b | at decision: waiting n (tok), head blocked, free k vs input need k | engine: admitted after s, prefill s, preempted | ledger: queue / memory / head / prefill / cost s, cheapest other s | DY: b, admitted after s, waiting n, free vs need`,
);
for (const i of tPA.slice(0, show)) {
  const r = pa.recs[i]!;
  const d = dy.recs[i]!;
  const a = r.at[r.backend]!;
  const ad = d.at[d.backend]!;
  const q = w.requests[i]!;
  const t = r.terms;
  console.log(
    `#${i} ${s(r.ttft)} (${s(d.ttft)}) p ${k(q.promptTokens)} (${k(w.gatewayPromptTokens[i]!)}) c ${k(r.cached)}/${k(d.cached)} o ${q.outputTokens} (${w.maxTokens[i] ?? "-"}) | ${r.reason} b${r.backend} | w ${a.waiting} (${k(a.waitingTokens)})${a.headBlocked ? " HB" : ""} free ${k(a.free)} need ${k(a.needInput)} | adm +${s(r.admit)} pf ${s(r.ttft - r.admit)} pre ${r.preempted} | ` +
      (t ? `L ${s(t.queue)}/${s(t.memory)}/${s(t.least)}/${s(t.prefill)}/${s(t.total)} oth ${s(r.minOther!)}` : "L unpriced") +
      ` | DY b${d.backend} adm +${s(d.admit)} w ${ad.waiting} free ${k(ad.free)} need ${k(ad.needInput)}`,
  );
}

// Whole-run: how good is the ledger's start (queue/memory) against the engine's admission wait.
{
  const R = pa.recs.filter((x) => x.terms !== undefined);
  const err = R.map((x) => x.admit - Math.max(x.terms!.queue, x.terms!.memory, x.terms!.least));
  console.log(
    `\n== all priced decisions (${R.length}): engine admission wait − ledger's predicted start, s: p1 ${s(pct(1, err))} p50 ${s(pct(50, err))} p99 ${s(pct(99, err))} p99.9 ${s(pct(99.9, err))}; ` +
      `engine waited > 1 s where the ledger predicted < 0.1 s: ${R.filter((x) => x.admit > 1000 && Math.max(x.terms!.queue, x.terms!.memory, x.terms!.least) < 100).length}`,
  );
  const bl = pa.recs.map((x) => !startsNow(x.at[x.backend]!));
  const bd = dy.recs.map((x) => !startsNow(x.at[x.backend]!));
  console.log(
    `  could not start at once on the chosen engine: prefix_aware ${share(bl)}, dynamo ${share(bd)}; admission wait mean ${s(mean(pa.recs.map((x) => x.admit)))} / ${s(mean(dy.recs.map((x) => x.admit)))} s, p99 ${s(pct(99, pa.recs.map((x) => x.admit)))} / ${s(pct(99, dy.recs.map((x) => x.admit)))} s`,
  );
}

// Counterfactual p99s (nearest rank over all requests, as an audit estimate, not the report's): prefix_aware's
// TTFTs with its tail's short prompts (< 64k) given Dynamo's TTFT for them, and with its long ones given Dynamo's.
{
  const p99 = (xs: number[]) => pct(99, xs);
  const base = pa.recs.map((x) => x.ttft);
  const tailSet = new Set(tPA);
  const shortSwap = base.map((t, i) => (tailSet.has(i) && !long(i) ? Math.min(t, dy.recs[i]!.ttft) : t));
  const longSwap = base.map((t, i) => (tailSet.has(i) && long(i) ? dy.recs[i]!.ttft : t));
  const anyShort = base.map((t, i) => (!long(i) ? Math.min(t, dy.recs[i]!.ttft) : t));
  console.log(
    `\n== counterfactual TTFT p99 (rank floor(0.99 n)): prefix_aware ${s(p99(base))} s, dynamo ${s(p99(dy.recs.map((x) => x.ttft)))} s; ` +
      `our tail's short prompts at min(ours, Dynamo's) ${s(p99(shortSwap))} s; every short prompt at min(ours, Dynamo's) ${s(p99(anyShort))} s; our tail's long prompts at Dynamo's ${s(p99(longSwap))} s`,
  );
  const longs = [...Array(n).keys()].filter(long);
  console.log(
    `  prompts ≥ 64k: ${longs.length} (${((100 * longs.length) / n).toFixed(2)}% of requests); their TTFT p50 ${s(pct(50, longs.map((i) => pa.recs[i]!.ttft)))} / ${s(pct(50, longs.map((i) => dy.recs[i]!.ttft)))} s, mean ${s(mean(longs.map((i) => pa.recs[i]!.ttft)))} / ${s(mean(longs.map((i) => dy.recs[i]!.ttft)))} s (ours / Dynamo's); ` +
      `short prompts with TTFT > 2 s: ${pa.recs.filter((x, i) => !long(i) && x.ttft > 2000).length} / ${dy.recs.filter((x, i) => !long(i) && x.ttft > 2000).length}`,
  );
  // The short requests of our tail: the chosen engine's memory at the decision, and what filled it.
  const shorts = tPA.filter((i) => !long(i));
  console.log(
    `  our tail's short prompts: input above free KV at the decision ${shorts.filter((i) => pa.recs[i]!.at[pa.recs[i]!.backend]!.needInput > pa.recs[i]!.at[pa.recs[i]!.backend]!.free).length} of ${shorts.length}; ` +
      `ledger memory wait mean ${s(mean(shorts.map((i) => pa.recs[i]!.terms?.memory ?? 0)))} s vs engine admission wait ${s(mean(shorts.map((i) => pa.recs[i]!.admit)))} s`,
  );
}

// Our tail's short prompts one by one, with the biggest KV holder on the chosen engine at the decision and when it ended.
{
  console.log(
    "\n== our tail's short prompts: req TTFT PA (DY) s | reason b | waiting n, HB, free vs need k | admitted after s | ledger queue/memory s | biggest holder: req, held k, phase, prompt k, answer (hint), its TTFT, its end − this arrival s | DY b, admitted after",
  );
  const end = new Float64Array(n);
  // A request's end ≈ arrival + TTFT + answer × the mean inter-token time: the audit reads only TTFTs, so this
  // prints the holder's TTFT and answer; its memory comes back once its answer is decoded.
  for (const i of tPA.filter((j) => !long(j))) {
    const r = pa.recs[i]!;
    const a = r.at[r.backend]!;
    const b = a.big;
    const d = dy.recs[i]!;
    console.log(
      `#${i} ${s(r.ttft)} (${s(d.ttft)}) p ${k(w.requests[i]!.promptTokens)} | ${r.reason} b${r.backend} | w ${a.waiting}${a.headBlocked ? " HB" : ""} free ${k(a.free)} need ${k(a.needInput)} | adm +${s(r.admit)} | L ${s(r.terms?.queue ?? 0)}/${s(r.terms?.memory ?? 0)} | ` +
        (b
          ? `big #${b.i} ${k(b.held * bt)} ${b.phase} p ${k(b.prompt)} o ${b.out} (${b.hint ?? "-"}) ttft ${s(pa.recs[b.i]!.ttft)} arrived ${s(w.requests[i]!.arrivalMs - w.requests[b.i]!.arrivalMs)} s before`
          : "empty") +
        ` | DY b${d.backend} adm +${s(d.admit)}`,
    );
    end[i] = 0;
  }
}

// The ledger's memory at our tail's short prompts: what it held on the chosen backend against the engine's KV in
// use, and when it expected its requests there to end against when they did (each slot mapped to its request).
{
  const fin = pa.finish;
  const line = (ids: number[], label: string) => {
    const R = ids.map((i) => pa.recs[i]!).filter((x) => x.ledger !== undefined);
    const used = R.map((x) => fleet.kvCacheTokens - x.at[x.backend]!.free);
    const held = R.map((x) => x.ledger!.held);
    const errs: number[] = [];
    const bigErr: number[] = [];
    const ftErr: number[] = [];
    const decErr: number[] = [];
    for (let q = 0; q < R.length; q++) {
      const x = R[q]!;
      const now = w.requests[ids[q]!]!.arrivalMs;
      let big: { i: number; kv: number; expEnd: number } | undefined;
      for (const sl of x.ledger!.slots) {
        if (sl.i < 0) continue;
        errs.push(fin[sl.i]! - sl.expEnd);
        const ft = w.requests[sl.i]!.arrivalMs + pa.recs[sl.i]!.ttft;
        ftErr.push(ft - sl.prefillEnd);
        decErr.push(fin[sl.i]! - ft - x.ledger!.decode);
        if (big === undefined || sl.kv > big.kv) big = sl;
      }
      if (big) bigErr.push(fin[big.i]! - Math.max(now, big.expEnd));
    }
    console.log(
      `  ${label} (${R.length}): engine KV in use mean ${k(mean(used))}, ledger's held (input + expected output) mean ${k(mean(held))}; ` +
        `slots there: true end − expected end p50 ${s(pct(50, errs))} s, p90 ${s(pct(90, errs))} s (${errs.length}) [first token − predicted prefill end p50 ${s(pct(50, ftErr))} s, mean ${s(mean(ftErr))}; true decode − learned decode p50 ${s(pct(50, decErr))} s, mean ${s(mean(decErr))}]; the biggest slot's true end − max(now, its expected end): mean ${s(mean(bigErr))} s, p50 ${s(pct(50, bigErr))} s; learned decode mean ${s(mean(R.map((x) => x.ledger!.decode)))} s`,
    );
  };
  console.log("\n== the ledger on the chosen backend at the decision");
  line(tPA.filter((j) => !long(j)), "our tail's short prompts");
  line(tPA.filter(long), "our tail's long prompts");
  const all = [...Array(n).keys()].filter((i) => i > n / 10);
  line(all, "every decision past the first tenth");
  // True decode (first token → end) of requests by prompt length, against the learned one.
  const dec = (f: (i: number) => boolean) => {
    const xs = [...Array(n).keys()].filter(f).map((i) => fin[i]! - w.requests[i]!.arrivalMs - pa.recs[i]!.ttft);
    return `${s(mean(xs))} s (n ${xs.length})`;
  };
  console.log(
    `  true decode (first token → end) mean: prompts ≥ 64k ${dec(long)}, 16k–64k ${dec((i) => !long(i) && w.requests[i]!.promptTokens >= 16384)}, < 16k ${dec((i) => w.requests[i]!.promptTokens < 16384)}; ` +
      `answer mean ≥ 64k ${mean([...Array(n).keys()].filter(long).map((i) => w.requests[i]!.outputTokens)).toFixed(0)} vs all ${mean(w.requests.map((r) => r.outputTokens)).toFixed(0)} tokens`,
  );
}

// What a conditional rule would have said (a gauge, not a policy): a slot whose first token came back `e` ms ago
// ends after the mean residual of the decode durations longer than e (the run's completed decodes, in hindsight:
// a gateway would learn them from its own first tokens and completions); one still prefilling ends at
// max(now, its predicted prefill end) + the mean decode. Against the ledger's rule (endFromNow), on the same slots.
{
  const fin = pa.finish;
  const D = [...Array(n).keys()].map((i) => fin[i]! - w.requests[i]!.arrivalMs - pa.recs[i]!.ttft).sort((a, b) => a - b);
  const suffix = new Float64Array(D.length + 1);
  for (let j = D.length - 1; j >= 0; j--) suffix[j] = suffix[j + 1]! + D[j]!;
  const meanD = suffix[0]! / D.length;
  const residual = (e: number) => {
    let lo = 0;
    let hi = D.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (D[mid]! <= e) lo = mid + 1;
      else hi = mid;
    }
    const cnt = D.length - lo;
    return cnt === 0 ? 0 : suffix[lo]! / cnt - e;
  };
  const gauge = (ids: number[], label: string) => {
    const ledgerErr: number[] = [];
    const condErr: number[] = [];
    for (const q of ids) {
      const x = pa.recs[q]!;
      if (!x.ledger) continue;
      const now = w.requests[q]!.arrivalMs;
      for (const sl of x.ledger.slots) {
        if (sl.i < 0) continue;
        const ft = w.requests[sl.i]!.arrivalMs + pa.recs[sl.i]!.ttft;
        const cond = ft <= now ? now + residual(now - ft) : Math.max(now, sl.prefillEnd) + meanD;
        ledgerErr.push(fin[sl.i]! - sl.expEnd);
        condErr.push(fin[sl.i]! - cond);
      }
    }
    console.log(
      `  ${label}: true end − expected end, ledger's rule p50 ${s(pct(50, ledgerErr))} mean ${s(mean(ledgerErr))} |err| mean ${s(mean(ledgerErr.map(Math.abs)))} s; conditional rule p50 ${s(pct(50, condErr))} mean ${s(mean(condErr))} |err| mean ${s(mean(condErr.map(Math.abs)))} s (${ledgerErr.length} slots)`,
    );
  };
  console.log(`\n== gauge: the ledger's expected ends against a conditional-residual rule (mean decode ${s(meanD)} s)`);
  gauge(tPA.filter((j) => !long(j)), "our tail's short prompts");
  gauge(tPA.filter(long), "our tail's long prompts");
  gauge([...Array(n).keys()].filter((i) => i > n / 10), "every decision past the first tenth");
}
