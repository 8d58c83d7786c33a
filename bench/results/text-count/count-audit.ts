// text-count's copy of moe8-count/count-audit.ts: the count terms are taken against the count the policy itself
// used (PrefixAwarePolicy.countOf: on this branch, a later turn past the window is counted from its earlier
// turn's usage.prompt_tokens, src/routing/text-counts.ts), not the Worker's raw count; on main both are the same.
// "known" stays the truth's (an earlier request with the same text past the window had completed).
// The ledger's memory count against the engine's at each decision (audit only: nothing here is used by the
// router or the simulator). For every backend prefix_aware prices for memory (memoryWaitForMs, the request's
// input), the ledger's "fits now" (memory wait 0) is set against the engine's (its input past its cached prefix
// within the free blocks), and the gap between (engine used + engine need) and (ledger held + ledger need) is
// split term by term, request by request:
//   need.count     the request's own prompt: true tokens − the Worker's count (estimated past the key window)
//   need.known     the same, for a prompt whose text past the window an earlier request of ours had completed
//                  (usage.prompt_tokens then told the gateway that text's true count: knowable; need.count is not)
//   need.cache     the rest of its need's gap (the engine's prefix hit against the index's match, block rounding)
//   in.count       in-flight admitted requests: true prompt − the Worker's count, on the prompt blocks held
//   in.known       the same, for those whose text past the window was known when they were routed
//   in.chunk       a prefilling request's input not yet allocated (chunked: the engine takes it chunk by chunk,
//                  and counts it free meanwhile; the ledger counts the whole input from the route)
//   in.round       the input's last block, partly empty: whole blocks (ceil(prompt / block) × block) − prompt tokens
//   in.share       the rest of the input gap: cached history pinned (shared blocks once, 1/refs each) against
//                  the ledger's history share, the match
//   out            answer blocks held now − the ledger's answer decoded so far (answerTokens × decoded share)
//   queued         a ledger slot whose request waits in the engine's queue (holds nothing yet)
//   gone           a ledger slot whose request the engine has ended (holds nothing)
//   unbooked       an engine request with no ledger slot (the ledger thinks it ended)
// The engine's watermark is 0 (SchedulerConfig.watermark, sim/model/scheduler.ts), every referenced block is a
// running request's (all requests are ours), and unreferenced cached blocks sit in the free queue: those terms are
// structurally 0 in the simulator and are not listed.
//   MOONCAKE_TRACE=... npx tsx bench/results/moe8-count/count-audit.ts mooncake 8 2 tuning 2 qwen3-30b-a3b-h100-vllm
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import type { EngineModel } from "../../../sim/model/engine-model";
import { DEFAULT_PREFIX_TOKENS } from "../../../sim/prepare";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { simulatePolicy } from "../../../sim/simulator";
import { type EngineInside, loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING, quantileOf } from "../audit-run";

const run = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const { w, fleet } = run;
const bt = w.blockTokens;
const n = w.requests.length;
const focus = Number(run.extra[0] ?? 4817);
const k = (v: number) => `${(v / 1000).toFixed(1)}k`;
// A prompt's text past the key window, by its first block there (the simulator draws the Worker's count error
// by it: a conversation's later turns repeat it). Completed ones are known: usage.prompt_tokens came back.
const firstPast = Math.floor(DEFAULT_PREFIX_TOKENS / bt);
const textOf = (j: number) => w.promptBlocks[j]![firstPast];
const knownTexts = new Set<number>();
const knownAtRoute = new Uint8Array(n);
{
  const ep = (await import("../../../sim/model/engine-model")).EngineModel.prototype as unknown as {
    finish: (r: { id: string }) => void;
  };
  const finish = ep.finish;
  ep.finish = function (this: unknown, r) {
    const key = textOf(Number(r.id));
    if (key !== undefined) knownTexts.add(key);
    finish.call(this, r);
  };
}
const known = (j: number) => {
  const key = textOf(j);
  return key !== undefined && knownTexts.has(key);
};

interface Slot {
  at: number;
  end: number;
  kvTokens: number;
  outputTokens: number;
  answerTokens: number;
  cachedTokens: number;
  keyedTokens: number;
}
interface CostState {
  memTokens: number;
  keyedTokens: number;
  cachedTokens: number;
  capacity: number;
  residenceMs: number;
  decodeMs: number;
  open: Slot[];
}
interface LedgerAt {
  need: number;
  wait: number;
  held: number;
  capacity: number;
  learned: boolean;
  /** The hold back's ask with the learned margin (../../../src/routing/estimate-margin.ts), when it asked. */
  marginNeed?: number;
  marginWait?: number;
  /** Per open slot: the slot and what the ledger counts it to hold now (input + history share, answer so far). */
  slots: { sl: Slot; input: number; out: number }[];
}
interface EngReq {
  id: string;
  promptTokens: number;
  held: number;
  phase: string;
  slots: Int32Array | null;
}

const TERMS = ["need.count", "need.known", "need.cache", "in.count", "in.known", "in.chunk", "in.round", "in.share", "out", "queued", "gone", "unbooked"] as const;
type Term = (typeof TERMS)[number];
interface Rec {
  i: number;
  b: number;
  chosen: boolean;
  reason: string;
  ledgerFits: boolean;
  engineFits: boolean;
  learned: boolean;
  waiting: number;
  free: number;
  ledgerNeed: number;
  engineNeed: number;
  ledgerHeld: number;
  engineUsed: number;
  capacity: number;
  terms: Record<Term, number>;
  residual: number;
  holdBack: string;
  /** FCFS: what the engine will have taken before this request: running prefills' rest + the queue ahead's input. */
  fcfsUsed: number;
  fcfsFits: boolean;
  fterms: Record<Term, number>;
  fresidual: number;
}

const policy = new PrefixAwarePolicy();
const model = policy.model as unknown as {
  states: CostState[];
  memoryWaitForMs(i: number, need: number, now: number, pinned?: number): number;
};
const slotOf = new WeakMap<object, number>();
let ledger: (LedgerAt | undefined)[] = [];
let nowOf = 0;
const wrapped = model.memoryWaitForMs.bind(model);
model.memoryWaitForMs = (i, need, now, pinned) => {
  const wait = wrapped(i, need, now, pinned);
  if (ledger[i] !== undefined) {
    // The hold back's second ask (input + the learned margin): the ledger's own is the first.
    ledger[i]!.marginNeed = need;
    ledger[i]!.marginWait = wait;
    return wait;
  }
  const s = model.states[i]!;
  const history = pinned === undefined ? 0 : Math.max(0, pinned - s.keyedTokens);
  const decode = s.decodeMs > 0 ? s.decodeMs : s.residenceMs;
  const perCached = s.cachedTokens > 0 ? history / s.cachedTokens : 0;
  const slots = s.open.map((sl) => {
    const decoded = decode > 0 ? Math.min(1, Math.max(0, (now - sl.end) / decode)) : 1;
    return { sl, input: sl.kvTokens - sl.outputTokens + sl.cachedTokens * perCached, out: sl.answerTokens * decoded };
  });
  const held = slots.reduce((a, x) => a + x.input + x.out, 0);
  ledger[i] = { need, wait, held, capacity: s.capacity, learned: s.residenceMs !== 0 && s.open.length > 0, slots };
  return wait;
};
// The count the policy took for each request (its last countOf before the request was routed).
const policyCount = new Float64Array(n);
let lastCount = Number.NaN;
{
  const p = policy as unknown as { countOf?: (req: unknown, bt: number) => { prompt: number } };
  if (p.countOf !== undefined) {
    const countOf = p.countOf.bind(policy);
    p.countOf = (req, b) => {
      const c = countOf(req, b);
      lastCount = c.prompt;
      return c;
    };
  }
}
const pick = policy.pick.bind(policy);
policy.pick = (req, f, ctx) => {
  ledger = [];
  nowOf = ctx.now;
  lastCount = req.promptTokens;
  return pick(req, f, ctx);
};

const recs: Rec[] = [];
let focusEngines: string[] = [];
/** Engine j at request i's decision: free KV against i's input past its cached prefix, and its queue. */
function engineLine(e: EngineModel, j: number, i: number, now: number): string {
  e.metrics(now);
  const x = e as unknown as EngineInside;
  const s = x.scheduler as unknown as { waiting: unknown[]; waitHead: number };
  const need = (Math.ceil(w.requests[i]!.promptTokens / bt) - x.pool.longestPrefix(w.promptBlocks[i]!)) * bt;
  return `b${j}: free ${k(x.pool.numFree * bt)}, need ${k(need)}, queue ${s.waiting.length - s.waitHead}${ledger[j] === undefined ? " (not priced: out of the work bound)" : ""}`;
}
const res = simulatePolicy(w, fleet, "prefix_aware", (specs) => new Router(specs, { policy, blockTokens: bt }), GATEWAY_VIEW, undefined, {
  routed(i, b, d, engines) {
    const now = w.requests[i]!.arrivalMs;
    if (now !== nowOf) throw new Error(`decision ${i} priced at ${nowOf}, routed at ${now}`);
    policyCount[i] = lastCount;
    ledger.forEach((L, j) => {
      if (L === undefined) return;
      recs.push(audit(i, j, j === b, d.reason, L, engines[j]!, now));
    });
    for (const sl of model.states[b]!.open) if (!slotOf.has(sl) && sl.at === now) slotOf.set(sl, i);
    knownAtRoute[i] = known(i) ? 1 : 0;
    if (i === focus) focusEngines = engines.map((e, j) => engineLine(e, j, i, now));
  },
});

function audit(i: number, b: number, chosen: boolean, reason: string, L: LedgerAt, e: EngineModel, now: number): Rec {
  e.metrics(now);
  const x = e as unknown as EngineInside & {
    byId: Map<string, EngReq>;
    pool: { refs: Int32Array };
  };
  const free = x.pool.numFree * bt;
  const cap = x.pool.numBlocks * bt;
  const s = x.scheduler as unknown as { waiting: unknown[]; waitHead: number };
  const waiting = s.waiting.length - s.waitHead;
  const cached = x.pool.longestPrefix(w.promptBlocks[i]!);
  const engineNeed = (Math.ceil(w.requests[i]!.promptTokens / bt) - cached) * bt;
  const t = Object.fromEntries(TERMS.map((k) => [k, 0])) as Record<Term, number>;
  const count = (j: number) => w.requests[j]!.promptTokens - policyCount[j]!;
  t[known(i) ? "need.known" : "need.count"] = count(i);
  t["need.cache"] = engineNeed - L.need - count(i);
  const f = Object.fromEntries(TERMS.map((k) => [k, 0])) as Record<Term, number>;
  f["need.count"] = t["need.count"];
  f["need.known"] = t["need.known"];
  f["need.cache"] = t["need.cache"];
  const byReq = new Map<number, { input: number; out: number }>();
  for (const { sl, input, out } of L.slots) {
    const j = slotOf.get(sl);
    if (j === undefined) throw new Error(`slot without a request at decision ${i}`);
    byReq.set(j, { input, out });
  }
  let used = 0;
  let queueNeed = 0;
  let chunkRest = 0;
  for (const r of x.byId.values() as Iterable<EngReq & { blocks: readonly number[] }>) {
    if (r.phase === "gone") continue;
    const j = Number(r.id);
    const pb = Math.ceil(r.promptTokens / bt);
    let input = 0;
    let out = 0;
    for (let k = 0; k < r.held; k++) {
      const share = bt / x.pool.refs[r.slots![k]!]!;
      if (k < pb) input += share;
      else out += share;
    }
    used += input + out;
    const l = byReq.get(j);
    if (l === undefined) {
      t.unbooked += input + out;
      f.unbooked += input + out;
      continue;
    }
    byReq.delete(j);
    const c = count(j);
    if (r.held === 0) {
      t.queued -= l.input + l.out;
      // FCFS: a queued request ahead takes its input (past its cached prefix) before this one.
      const qneed = (Math.ceil((r as unknown as { target: number }).target / bt) - x.pool.longestPrefix(r.blocks)) * bt;
      queueNeed += qneed;
      f[knownAtRoute[j] ? "in.known" : "in.count"] += c;
      f.queued += qneed - l.input - l.out - c;
      continue;
    }
    // What the engine will hold of its input once admitted whole, against what it holds now.
    const chunk = r.phase === "prefill" && r.held < pb ? (pb - r.held) * bt : 0;
    chunkRest += chunk;
    const round = pb * bt - r.promptTokens;
    const inCount = knownAtRoute[j] ? "in.known" : "in.count";
    t[inCount] += c;
    t["in.chunk"] -= chunk;
    t["in.round"] += round;
    t["in.share"] += input + chunk - l.input - c - round;
    f["in.round"] += round;
    t.out += out - l.out;
    f[inCount] += c;
    f["in.share"] += input + chunk - l.input - c - round;
    f.out += out - l.out;
  }
  for (const l of byReq.values()) {
    t.gone -= l.input + l.out;
    f.gone -= l.input + l.out;
  }
  const gap = used + engineNeed - (L.held + L.need);
  const residual = gap - TERMS.reduce((a, k) => a + t[k], 0);
  const fcfsUsed = used + chunkRest + queueNeed;
  const fresidual = fcfsUsed + engineNeed - (L.held + L.need) - TERMS.reduce((a, k) => a + f[k], 0);
  if (Math.abs(used - (cap - free)) > 1) throw new Error(`used ${used} against ${cap - free} at decision ${i}`);
  return {
    i,
    b,
    chosen,
    reason,
    ledgerFits: L.wait === 0,
    engineFits: engineNeed <= free,
    learned: L.learned,
    waiting,
    free,
    ledgerNeed: L.need,
    engineNeed,
    ledgerHeld: L.held,
    engineUsed: used,
    capacity: L.capacity,
    terms: t,
    residual,
    fcfsUsed,
    fcfsFits: fcfsUsed + engineNeed <= cap,
    fterms: f,
    fresidual,
    holdBack:
      L.marginNeed === undefined
        ? `hold back asks ${k(L.need)}: ${L.wait > 0 ? "waits" : "fits"}`
        : `hold back asks ${k(L.marginNeed)} (margin ${k(L.marginNeed - L.need)}): ${L.marginWait! > 0 ? "waits" : "fits"}`,
  };
}

console.log(
  `${run.spec} ${run.set} seed ${run.seed}, ${n} requests, ${run.backends} backends ×${run.load}, ${run.preset}; prefix_aware p99 ${(res.ttftP99Ms / 1000).toFixed(2)} s`,
);
console.log(`(decision, backend) pairs priced for memory: ${recs.length}; chosen: ${recs.filter((r) => r.chosen).length}`);
const line = (r: Rec) =>
  `#${r.i} b${r.b}${r.chosen ? "*" : ""} ${r.reason} | ledger ${r.ledgerFits ? "fits" : "waits"} (held ${k(r.ledgerHeld)} + need ${k(r.ledgerNeed)} vs ${k(r.capacity)}${r.learned ? "" : ", nothing learned"}) | engine ${r.engineFits ? "fits" : "waits"} (used ${k(r.engineUsed)} + need ${k(r.engineNeed)}, free ${k(r.free)}, queue ${r.waiting}) | ` +
  TERMS.filter((x) => Math.abs(r.terms[x]) >= 1).map((x) => `${x} ${r.terms[x] > 0 ? "+" : ""}${k(r.terms[x])}`).join(", ") +
  (Math.abs(r.residual) >= 1 ? ` | residual ${k(r.residual)}` : "");

console.log(`\n== decision #${focus}, every backend priced (* chosen)`);
for (const r of recs.filter((r) => r.i === focus)) console.log(`${line(r)} | ${r.holdBack}`);
console.log(`  every engine then: ${focusEngines.join("; ")}`);

interface View {
  name: string;
  fits: (r: Rec) => boolean;
  used: (r: Rec) => number;
  terms: (r: Rec) => Record<Term, number>;
}
const VIEWS: View[] = [
  { name: "engine's free blocks now", fits: (r) => r.engineFits, used: (r) => r.engineUsed, terms: (r) => r.terms },
  {
    name: "engine's free blocks after what it admits first (FCFS: running prefills' rest, the queue ahead's input)",
    fits: (r) => r.fcfsFits,
    used: (r) => r.fcfsUsed,
    terms: (r) => r.fterms,
  },
];
for (const v of VIEWS)
  for (const [label, sel] of [
    ["chosen backend", (r: Rec) => r.chosen],
    ["every backend priced", (_: Rec) => true],
  ] as const) {
    const all = recs.filter(sel);
    const under = all.filter((r) => r.ledgerFits && !v.fits(r));
    const over = all.filter((r) => !r.ledgerFits && v.fits(r));
    console.log(
      `\n== truth: ${v.name}; ${label}: ${all.length} pairs; both fit ${all.filter((r) => r.ledgerFits && v.fits(r)).length}, both wait ${all.filter((r) => !r.ledgerFits && !v.fits(r)).length}, ledger fits / engine waits ${under.length}, ledger waits / engine fits ${over.length}`,
    );
    for (const [name, set, sign] of [
      ["ledger fits, engine waits (the ledger under-counts)", under, 1],
      ["ledger waits, engine fits (the ledger over-counts)", over, -1],
    ] as const) {
      if (set.length === 0) continue;
      // A term "is the error" when it is the largest pointing the engine's way; "alone flips" when the
      // ledger's (held + need) corrected by it alone gives the engine's verdict.
      console.log(`  ${name}: ${set.length}; not learned yet ${set.filter((r) => !r.learned).length}`);
      console.log(
        "    term | pairs where it points the engine's way | … and is the largest such term | … and alone flips the verdict | its size there, p50 / p90 / max | its mean over all pairs of the class",
      );
      for (const term of TERMS) {
        const T = (r: Rec) => v.terms(r)[term];
        const pointing = set.filter((r) => sign * T(r) > 0);
        const largest = set.filter((r) => sign * T(r) > 0 && TERMS.every((o) => sign * v.terms(r)[o] <= sign * T(r)));
        const flips = set.filter((r) => {
          const ledgerOver = r.ledgerHeld + r.ledgerNeed - r.capacity;
          const corrected = ledgerOver + T(r);
          return sign > 0 ? corrected > 0 && ledgerOver <= 0 : corrected <= 0 && ledgerOver > 0;
        });
        const sizes = pointing.map((r) => sign * T(r));
        console.log(
          `    ${term} | ${pointing.length} | ${largest.length} | ${flips.length} | ${k(quantileOf(sizes, 0.5))} / ${k(quantileOf(sizes, 0.9))} / ${k(Math.max(0, ...sizes))} | ${k(set.reduce((a, r) => a + T(r), 0) / set.length)}`,
        );
      }
      const gaps = set.map((r) => sign * (v.used(r) + r.engineNeed - r.ledgerHeld - r.ledgerNeed));
      console.log(`    the whole gap: p50 ${k(quantileOf(gaps, 0.5))}, p90 ${k(quantileOf(gaps, 0.9))}, max ${k(Math.max(...gaps))}`);
      if (label === "chosen backend" && set.length <= 40) {
        console.log("    one by one (instant terms):");
        for (const r of set) console.log(`      ${line(r)}${v.used === VIEWS[0]!.used ? "" : ` | FCFS used ${k(r.fcfsUsed)}`}`);
      }
    }
  }
const worst = Math.max(...recs.map((r) => Math.max(Math.abs(r.residual), Math.abs(r.fresidual))));
console.log(`\nlargest residual (gap − Σ terms) over every pair: ${worst.toFixed(1)} tokens`);
