// The scrape's memory-blocked-head term (src/routing/engine-memory.ts) on one run, decision by decision:
// what it predicted, what the engine model (the simulator's ground truth) did, and which decisions it moved.
//   MOONCAKE_TRACE=… npx tsx bench/results/scrape-margin/audit.ts mooncake 8 2 scoring 3 qwen3-30b-a3b-h100-vllm
// SCRAPE_MS (default 1000) as bench:sim's --scrape-ms; TTFT_OFF=FILE (tail.ts's TTFT_OUT of the scrape-off run)
// adds the scrape-off run's TTFT of each request for the slowest 1%; TIE=ms moves the tie tolerance (a gauge).
//
// Per decision, per backend i where the term charged a head wait W_pred > 0 (the term's input: i's lagged
// reading), the engine model as it stands at the decision:
//   truly blocked: its waiting queue's head does not fit its free blocks now (need = prompt + answer, less
//                  the head's cached prefix there, as the scheduler asks), or the queue is non-empty and
//                  the head waits for memory;
//   W_true:        when that head is admitted (the scheduler's admit, recorded) − now; 0 with nothing waiting.
// Counterfactual: each decision is also picked with the head wait zeroed (the same policy state, before the
// real pick; pick has no side effects, which the run checks: its p99 must equal the plain scrape-on run's).
// An audit only: nothing here changes routing.
import { readFileSync } from "node:fs";
import { PrefillCostModel } from "../../../src/routing/cost-model";
import { EngineMemory } from "../../../src/routing/engine-memory";
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import type { EngineReq } from "../../../sim/model/scheduler";
import { viewOf } from "../../../sim/policies";
import { simulatePolicy } from "../../../sim/simulator";
import {
  type EngineInside,
  loadAuditRunFromArgv,
  MOONCAKE_MOE_8_TUNING,
  quantileOf,
  tieGaugedRouter,
  withTtft,
} from "../audit-run";

const { w, fleet } = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const scrapeMs = Number(process.env.SCRAPE_MS ?? 1000);
const n = w.requests.length;
const bt = w.blockTokens;
const ttft = new Float64Array(n);
const admitAt = new Float64Array(n).fill(Number.NaN);

interface Charge {
  /** Request being routed (arrival order). */
  k: number;
  i: number;
  predMs: number;
  now: number;
  /** Reading's age and waiting count. */
  age: number;
  readWaiting: number;
  /** Engine i at the decision: waiting count, head id (−1 none), whether the head's need exceeds free blocks. */
  trueWaiting: number;
  headId: number;
  headBlocked: boolean;
  /** Head's need and the free blocks, tokens. */
  headNeed: number;
  freeNow: number;
  /** The head the walk inferred (request, −1 none found) and how many holders it waited on. */
  predHead: number;
  holders: number;
  /** The request's own memory wait there: the ledger's (in the cost), and with the margin (the hold back's). */
  ledgerMs: number;
  marginMs: number;
}
const charges: Charge[] = [];
const chosen = new Int32Array(n).fill(-1);
const counterfactual = new Int32Array(n).fill(-1);
let zeroHead = false;
let current = -1;

const proto = EngineMemory.prototype;
const headWaitMs = proto.headWaitMs;
/** This decision's calls with a fresh reading that shows requests waiting. */
const calls: { i: number; ms: number; ties: number }[] = [];
/** Per such call: predicted > 0, the engine's head blocked on memory at the decision, ours routed at the reading's instant. */
const verdicts: { pred: boolean; blocked: boolean; ties: number }[] = [];
const pending: {
  i: number;
  ms: number;
  age: number;
  w: number;
  head: number;
  holders: number;
  ledgerMs?: number;
  marginMs?: number;
}[] = [];
/** Each of our slots (cost-model.ts PrefillSlot) → its request, to name the head the walk found. */
const slotOf = new WeakMap<object, number>();
proto.headWaitMs = function (this: EngineMemory, ...a: Parameters<typeof headWaitMs>) {
  if (zeroHead) return 0;
  const ms = headWaitMs.apply(this, a);
  const [r, i, , , now] = a;
  if (r !== undefined && r.waiting > 0 && now - r.sampledAt <= this.maxAgeMs) {
    // Ours routed at the reading's own instant, after it was taken (the ticker reads before that instant's
    // arrivals; the RouterDO stamps a reading when its headers land, after the engine rendered it).
    let ties = 0;
    for (const slot of a[3].openSlots(i)) if (slot.at === r.sampledAt) ties++;
    calls.push({ i, ms, ties });
  }
  if (ms > 0 && r !== undefined) {
    // The walk's head: the first of the waiting (set's last w) that neither completed since nor was admitted.
    const inner = this as unknown as { set: object[]; holders: object[]; since: Set<object> };
    const set = inner.set;
    const w = Math.min(r.waiting, set.length);
    const held = new Set(inner.holders);
    let head = -1;
    for (let k = set.length - w; k < set.length; k++)
      if (!held.has(set[k]!) && !inner.since.has(set[k]!)) {
        head = slotOf.get(set[k]!) ?? -1;
        break;
      }
    pending.push({ i, ms, age: now - r.sampledAt, w: r.waiting, head, holders: inner.holders.length });
  }
  return ms;
};
const routedSlot = PrefillCostModel.prototype.routed;
PrefillCostModel.prototype.routed = function (this: PrefillCostModel, ...a: Parameters<typeof routedSlot>) {
  const slot = routedSlot.apply(this, a);
  slotOf.set(slot, current);
  return slot;
};
const pick = PrefixAwarePolicy.prototype.pick;
PrefixAwarePolicy.prototype.pick = function (this: PrefixAwarePolicy, ...a: Parameters<typeof pick>) {
  zeroHead = true;
  const cf = pick.apply(this, a);
  zeroHead = false;
  pending.length = 0;
  calls.length = 0;
  const real = pick.apply(this, a);
  if (current >= 0) counterfactual[current] = cf.index;
  // The request's own memory wait by the ledger, and with the learned margin (what the hold back read).
  const own = this as unknown as { memoryWaits: Float64Array; admitWaits: Float64Array };
  for (const p of pending) {
    p.ledgerMs = own.memoryWaits[p.i]!;
    p.marginMs = own.admitWaits[p.i]!;
  }
  return real;
};

let patched = false;
const res = simulatePolicy(
  w,
  { ...fleet, scrapeMs },
  "prefix_aware",
  withTtft((specs, readings) => {
    const router = tieGaugedRouter(bt, scrapeMs)(specs, readings);
    let k = 0;
    return {
      ...router,
      route(req, ctx) {
        current = k++;
        return router.route(req, ctx);
      },
      ...(router.firstToken ? { firstToken: router.firstToken.bind(router) } : {}),
      complete: router.complete.bind(router),
    };
  }, ttft),
  viewOf("prefix_aware"),
  undefined,
  {
    routed(k, bi, _d, engines) {
      const es = engines as unknown as (EngineInside & {
        t: number;
        metrics(now: number): unknown;
        scheduler: { waiting: EngineReq[]; admit(r: EngineReq): boolean };
      })[];
      if (!patched) {
        for (const e of es) {
          const admit = e.scheduler.admit.bind(e.scheduler);
          e.scheduler.admit = (r: EngineReq) => {
            const ok = admit(r);
            if (ok) admitAt[Number(r.id)] = e.t;
            return ok;
          };
        }
        patched = true;
      }
      chosen[k] = bi;
      const now = w.requests[k]!.arrivalMs;
      for (const p of pending) {
        const e = es[p.i]!;
        const q = e.scheduler;
        const waiting = q.waiting.length - q.waitHead;
        const head = waiting > 0 ? q.waiting[q.waitHead]! : undefined;
        const need = head === undefined ? 0 : (head.totalBlocks - e.pool.longestPrefix(head.blocks)) * bt;
        charges.push({
          k,
          i: p.i,
          predMs: p.ms,
          now,
          age: p.age,
          readWaiting: p.w,
          trueWaiting: waiting,
          headId: head === undefined ? -1 : Number(head.id),
          headBlocked: head !== undefined && need > e.pool.numFree * bt,
          headNeed: need,
          freeNow: e.pool.numFree * bt,
          predHead: p.head,
          holders: p.holders,
          ledgerMs: p.ledgerMs ?? Number.NaN,
          marginMs: p.marginMs ?? Number.NaN,
        });
      }
      pending.length = 0;
      for (const c of calls) {
        const e = es[c.i]!;
        const q = e.scheduler;
        const head = q.waiting.length > q.waitHead ? q.waiting[q.waitHead]! : undefined;
        const blocked = head !== undefined && head.totalBlocks - e.pool.longestPrefix(head.blocks) > e.pool.numFree;
        verdicts.push({ pred: c.ms > 0, blocked, ties: c.ties });
      }
      calls.length = 0;
    },
  },
);

const s = (x: number) => (x / 1000).toFixed(2);
console.log(`prefix_aware, scrape ${scrapeMs} ms: p50 ${res.ttftP50Ms.toFixed(0)} ms, p99 ${res.ttftP99Ms.toFixed(0)} ms`);
// BRIEF=1: that line alone (the gauge's).
if (process.env.BRIEF) process.exit(0);
const trueWait = (c: Charge) => (c.headId < 0 ? 0 : Math.max(0, admitAt[c.headId]! - c.now));
const moved = [...Array(n).keys()].filter((k) => counterfactual[k] !== chosen[k]);
const decisionsCharged = new Set(charges.map((c) => c.k)).size;
console.log(
  `head wait charged: ${charges.length} backend costs on ${decisionsCharged} decisions; decisions moved by it: ${moved.length}`,
);
const blocked = charges.filter((c) => c.headBlocked);
const notWaiting = charges.filter((c) => c.trueWaiting === 0);
const waitingNotBlocked = charges.filter((c) => c.trueWaiting > 0 && !c.headBlocked);
console.log(
  `engine at the decision: head blocked on memory ${blocked.length}, queue empty ${notWaiting.length}, waiting but head fits ${waitingNotBlocked.length}`,
);
const pred = charges.map((c) => c.predMs);
const truth = charges.map(trueWait);
const ratio = charges.map((c, j) => truth[j]! - pred[j]!);
console.log(
  `predicted head wait p10/p50/p90 ${quantileOf(pred, 0.1).toFixed(0)} / ${quantileOf(pred, 0.5).toFixed(0)} / ${quantileOf(pred, 0.9).toFixed(0)} ms; ` +
    `true p10/p50/p90 ${quantileOf(truth, 0.1).toFixed(0)} / ${quantileOf(truth, 0.5).toFixed(0)} / ${quantileOf(truth, 0.9).toFixed(0)} ms; ` +
    `true − predicted p10/p50/p90 ${quantileOf(ratio, 0.1).toFixed(0)} / ${quantileOf(ratio, 0.5).toFixed(0)} / ${quantileOf(ratio, 0.9).toFixed(0)} ms`,
);
for (const tied of [false, true]) {
  const v = verdicts.filter((x) => x.ties > 0 === tied);
  const cell = (p: boolean, b: boolean) => v.filter((x) => x.pred === p && x.blocked === b).length;
  console.log(
    `fresh readings with requests waiting, ${tied ? "with" : "without"} ours routed at the reading's instant (${v.length}): ` +
      `engine head blocked now: charged ${cell(true, true)}, not charged ${cell(false, true)}; not blocked now: charged ${cell(true, false)}, not charged ${cell(false, false)}`,
  );
}
console.log(
  `the request's own memory wait where a head wait was charged: ledger > 0 on ${charges.filter((c) => c.ledgerMs > 0).length}, with the margin > 0 on ${charges.filter((c) => c.marginMs > 0).length} of ${charges.length}` +
    " (the cost takes the later of the ledger's wait and the head's, never their sum)",
);
const sameHead = charges.filter((c) => c.predHead === c.headId);
const predAdmitted = charges.filter((c) => c.predHead >= 0 && admitAt[c.predHead]! <= c.now);
console.log(
  `inferred head = the engine's head now: ${sameHead.length} of ${charges.length}; inferred head already admitted at the decision: ${predAdmitted.length}` +
    ` (their predicted wait p50 ${quantileOf(predAdmitted.map((c) => c.predMs), 0.5).toFixed(0)} ms)`,
);
const headWaitOf = (c: Charge) => (c.predHead < 0 ? Number.NaN : admitAt[c.predHead]! - c.now);
const same = sameHead.map((c) => headWaitOf(c) - c.predMs);
console.log(
  `where the head is right: its true wait − predicted p10/p50/p90 ${quantileOf(same, 0.1).toFixed(0)} / ${quantileOf(same, 0.5).toFixed(0)} / ${quantileOf(same, 0.9).toFixed(0)} ms`,
);
for (const c of charges)
  console.log(
    `  charge #${c.k} on ${c.i}: pred ${c.predMs.toFixed(0)} ms, own ledger/margin wait ${c.ledgerMs.toFixed(0)}/${c.marginMs.toFixed(0)} (head #${c.predHead}, ${c.holders} holders; read w${c.readWaiting} age ${c.age.toFixed(0)}) | engine now w${c.trueWaiting} head #${c.headId}${c.headBlocked ? " blocked" : ""} need ${c.headNeed} free ${c.freeNow}, admitted +${trueWait(c).toFixed(0)} ms; inferred head admitted ${headWaitOf(c).toFixed(0)} ms from now`,
  );
const order = [...ttft.keys()].sort((a, b) => ttft[b]! - ttft[a]!);
const tail = order.slice(0, Math.ceil(n / 100));
const inTail = new Set(tail);
const off: number[] | undefined = process.env.TTFT_OFF ? JSON.parse(readFileSync(process.env.TTFT_OFF, "utf8")) : undefined;
const movedTail = moved.filter((k) => inTail.has(k));
console.log(`moved decisions in the slowest 1%: ${movedTail.length} of ${tail.length}`);
console.log("moved decisions (request, prompt, chosen ← without the term, TTFT on, TTFT off):");
for (const k of moved)
  console.log(
    `  #${k} prompt ${w.requests[k]!.promptTokens} → ${chosen[k]} (not ${counterfactual[k]}) TTFT ${s(ttft[k]!)} s` +
      (off ? ` (scrape off ${s(off[k]!)} s)` : "") +
      ` charges [${charges
        .filter((c) => c.k === k)
        .map(
          (c) =>
            `${c.i}: pred ${c.predMs.toFixed(0)} true ${trueWait(c).toFixed(0)} (read w${c.readWaiting} age ${c.age.toFixed(0)}; now w${c.trueWaiting}${c.headBlocked ? " blocked" : ""})`,
        )
        .join("; ")}]`,
  );
console.log("the slowest 1% (request, prompt, backend, TTFT on / off, engine queue head at decision admitted after):");
for (const k of tail.slice(0, Number(process.env.SHOW ?? 61)))
  console.log(
    `  #${k} prompt ${w.requests[k]!.promptTokens} on ${chosen[k]} TTFT ${s(ttft[k]!)} s` +
      (off ? ` / off ${s(off[k]!)} s` : "") +
      (counterfactual[k] !== chosen[k] ? ` (moved from ${counterfactual[k]})` : "") +
      ` admitted +${s(admitAt[k]! - w.requests[k]!.arrivalMs)} s`,
  );
