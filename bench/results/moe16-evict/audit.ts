// Which placements evict what a later request asks for again (moe16-hit's "unreachable": the pooled oracle hits it,
// no engine holds it at the request's arrival). main's policy as bench:sim runs it (audit-run.ts simulateAtTie, TIE
// env), the engine model read through casts: every block a BlockPool allocation evicts is logged with the engine,
// the time, the request whose allocation took the slot (its admission, or the growth of a running request: decode
// blocks or a later prefill chunk) and how long the evicted block had sat unreferenced in the free queue (its idle).
// For each unreachable oracle token (a lost block: in the request's oracle hit, past the best engine's prefix) the
// audit finds the last eviction of that block before the request came (the one that took the last copy) and charges
// the token to the evicting request: its placement reason, whether it reused anything itself, and whether the fleet
// had an older unreferenced block elsewhere at that moment (the oldest free-queue head over the other engines: an
// engine-truth bound on what a different placement could have kept). Then capacity against placement:
// - the lost block's position in the pooled LRU when its request came (reuse distance / pooled capacity);
// - the pooled oracle re-run with the fleet's KV less what running requests pin (sampled at every arrival).
// An audit only: nothing here is used by the router or the simulator.
//   MOONCAKE_TRACE=… [TIE=1] [SEEDS="1 2"] npx tsx bench/results/moe16-evict/audit.ts mooncake 16 4 tuning 0 qwen3-30b-a3b-h100-vllm
import { oracleHitRate } from "../../../sim/oracle";
import { BlockPool } from "../../../sim/model/kv-cache";
import type { EngineModel } from "../../../sim/model/engine-model";
import { StepScheduler } from "../../../sim/model/scheduler";
import { type AuditRunSpec, loadAuditRun, pooledOracleByRequest, quantileOf, simulateAtTie } from "../audit-run";

const [spec = "mooncake", backends = "16", load = "4", set = "tuning", , preset = "qwen3-30b-a3b-h100-vllm"] =
  process.argv.slice(2);
const seeds = (process.env.SEEDS ?? "1 2").trim().split(/\s+/).map(Number);

// ---- the engine model's internals, read through casts ----
interface PoolInside {
  head: number;
  next: Int32Array;
  keys: Float64Array;
  refs: Int32Array;
  numBlocks: number;
  numFree: number;
}
interface Eviction {
  t: number; // engine time of the allocation, ms
  engine: number;
  by: number; // request index whose allocation took the slot
  kind: "admit" | "grow";
  idle: number; // ms the evicted block had sat unreferenced
  olderElsewhere: number; // ms by which the oldest free-queue head on another engine was older (≤ 0: none older)
  emptyElsewhere: boolean; // another engine's next `count` free-queue blocks held no key (taking them there evicts nothing)
}

let engineOf = new WeakMap<object, number>();
let engines: readonly EngineModel[] = [];
let freedAt = new WeakMap<object, Float64Array>();
let current: { by: number; kind: "admit" | "grow" } | undefined;
let lastEviction = new Map<number, Eviction>();
let evictedBlocks = 0;
const clock = (pool: object) => {
  const e = engineOf.get(pool);
  return e === undefined ? Number.NaN : (engines[e] as unknown as { t: number }).t;
};
const stamps = (pool: object) => {
  let f = freedAt.get(pool);
  if (f === undefined) {
    f = new Float64Array((pool as unknown as PoolInside).numBlocks); // never used: free since 0
    freedAt.set(pool, f);
  }
  return f;
};

/** Whether the next `count` blocks the free queue gives out hold no key (never used, or output blocks released). */
function unkeyedAtHead(p: PoolInside, count: number): boolean {
  let s = p.head;
  for (let i = 0; i < count; i++, s = p.next[s]!) if (s < 0 || !Number.isNaN(p.keys[s]!)) return false;
  return true;
}
/** Referenced blocks holding no key: output and part-filled blocks of running requests, which no lookup can hit. */
function unkeyedPinned(p: PoolInside): number {
  let c = 0;
  for (let s = 0; s < p.numBlocks; s++) if (p.refs[s]! > 0 && Number.isNaN(p.keys[s]!)) c++;
  return c;
}

const proto = BlockPool.prototype as unknown as {
  allocate: (count: number, out: Int32Array, from: number) => void;
  release: (slots: Int32Array, n: number) => void;
};
const allocateOrig = proto.allocate;
proto.allocate = function (this: PoolInside, count, out, from) {
  const e = engineOf.get(this);
  if (e !== undefined) {
    const t = clock(this);
    const f = stamps(this);
    // The other engines' oldest unreferenced block, as they stand (engines advance lazily: their heads are as of
    // their last event, never younger than the truth).
    let oldestElsewhere = Number.POSITIVE_INFINITY;
    let emptyElsewhere = false;
    engines.forEach((other, j) => {
      if (j === e) return;
      const p = (other as unknown as { pool: PoolInside }).pool;
      if (p.numFree > 0 && p.head >= 0) oldestElsewhere = Math.min(oldestElsewhere, stamps(p)[p.head]!);
      if (!emptyElsewhere && p.numFree >= count) emptyElsewhere = unkeyedAtHead(p, count);
    });
    let s = this.head;
    for (let i = 0; i < count && s >= 0; i++, s = this.next[s]!) {
      const k = this.keys[s]!;
      if (Number.isNaN(k)) continue;
      evictedBlocks++;
      lastEviction.set(k, {
        t,
        engine: e,
        by: current?.by ?? -1,
        kind: current?.kind ?? "grow",
        idle: t - f[s]!,
        emptyElsewhere,
        olderElsewhere: Number.isFinite(oldestElsewhere) ? f[s]! - oldestElsewhere : Number.NEGATIVE_INFINITY,
      });
    }
  }
  allocateOrig.call(this, count, out, from);
};
const releaseOrig = proto.release;
proto.release = function (this: PoolInside, slots, n) {
  releaseOrig.call(this, slots, n);
  const t = clock(this);
  const f = stamps(this);
  for (let i = 0; i < n; i++) if (this.refs[slots[i]!] === 0) f[slots[i]!] = t;
};
// Who allocates: the scheduler's admission (enter) or a running request's growth (take).
const sched = StepScheduler.prototype as unknown as Record<string, (r: { id: string }, ...a: number[]) => void>;
for (const [name, kind] of [
  ["enter", "admit"],
  ["take", "grow"],
] as const) {
  const orig = sched[name]!;
  sched[name] = function (this: unknown, r, ...a) {
    const prev = current;
    current = { by: Number(r.id), kind };
    try {
      orig.call(this, r, ...a);
    } finally {
      current = prev;
    }
  };
}

// ---- WHATIF=oldest: an upper bound, not a policy ----
// Among the candidates the policy priced within SLACK ms (default: its own tie tolerance) of the cheapest and needing
// no more prefill than its pick (so no reuse is given up), the one whose free queue's head (the block it would evict
// next) has been unreferenced longest, by engine truth the gateway does not have. Fallbacks are left alone. If even
// this moves the hit little, no placement rule the gateway could run on its estimates of the same would do better.
const whatIf = process.env.WHATIF;
if (whatIf !== undefined && whatIf !== "oldest") throw new RangeError(`WHATIF: "oldest" or unset, got ${whatIf}`);
let moved = 0;
if (whatIf === "oldest") {
  const { PrefixAwarePolicy, DEFAULT_TIE_TOLERANCE_MS } = await import("../../../src/routing/policies/prefix-aware");
  const slack = process.env.SLACK === undefined ? Number(process.env.TIE ?? DEFAULT_TIE_TOLERANCE_MS) : Number(process.env.SLACK);
  if (!(slack >= 0)) throw new RangeError(`SLACK: must be >= 0 ms, got ${process.env.SLACK}`);
  const pp = PrefixAwarePolicy.prototype as unknown as { pick: (...a: unknown[]) => { index: number; reason: string } };
  const pickOrig = pp.pick;
  pp.pick = function (this: { costs: Float64Array; work: Float64Array }, ...a: unknown[]) {
    const out = pickOrig.apply(this, a);
    if (out.reason === "fallback" || engines.length === 0) return out;
    const c = this.costs;
    let bestCost = Number.POSITIVE_INFINITY;
    for (const x of c) if (x < bestCost) bestCost = x;
    let at = out.index;
    let oldest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < c.length; i++) {
      if (!(c[i]! <= bestCost + slack) || this.work[i]! > this.work[out.index]!) continue;
      const p = (engines[i] as unknown as { pool: PoolInside }).pool;
      const age = p.numFree > 0 && p.head >= 0 ? stamps(p)[p.head]! : Number.POSITIVE_INFINITY;
      if (age < oldest) {
        oldest = age;
        at = i;
      }
    }
    if (at !== out.index) moved++;
    return { ...out, index: at };
  };
}

// ---- one run ----
interface Charge {
  tokens: number;
  ev: Eviction | undefined; // undefined: never evicted before the request (never cached, or held out of prefix order)
  present: boolean; // some engine holds the block at the arrival (behind a missing earlier block)
  gapMs: number; // arrival − eviction
  rank: number; // the block's reuse distance in the pooled LRU at the arrival / pooled capacity
}

async function audit(seed: number) {
  const a: AuditRunSpec = { spec, backends: Number(backends), load: Number(load), set, seed, preset };
  const { w, fleet } = await loadAuditRun(a);
  const bt = w.blockTokens;
  const n = w.requests.length;
  const capacity = Math.floor((fleet.backends * fleet.kvCacheTokens) / bt);
  const oracle = pooledOracleByRequest(w, capacity);
  engineOf = new WeakMap();
  engines = [];
  moved = 0;
  freedAt = new WeakMap();
  lastEviction = new Map();
  evictedBlocks = 0;
  const reason: string[] = new Array(n);
  const to = new Int32Array(n);
  const served = new Float64Array(n).fill(Number.NaN);
  const best = new Float64Array(n);
  const charges: { i: number; c: Charge }[] = [];
  const lostBlocks = new Map<number, number[]>(); // request → block indices charged
  let pinnedSum = 0; // Σ over arrivals of the fleet's referenced blocks
  let pinnedN = 0;
  const unkeyedFrac: number[] = []; // per arrival: the fleet's referenced blocks with no key, / capacity
  const dupFrac: number[] = []; // every 25th arrival: keyed blocks that are a second (third, …) copy in the fleet, / capacity
  const { tie, r: res } = simulateAtTie(w, fleet, {
    routed(i, b, d, es) {
      if (engineOf.get((es[0] as unknown as { pool: object }).pool) === undefined) {
        engines = es;
        es.forEach((e, j) => engineOf.set((e as unknown as { pool: object }).pool, j));
      }
      reason[i] = d.reason;
      to[i] = b;
      const blocks = w.promptBlocks[i]!;
      const usable = Math.min(blocks.length, Math.floor((w.requests[i]!.promptTokens - 1) / bt));
      const held = es.map((e) => Math.min(usable, e.cachedPrefixBlocks(blocks)));
      const bestBlocks = Math.max(...held);
      best[i] = bestBlocks * bt;
      let unk = 0;
      for (const e of es) {
        const p = (e as unknown as { pool: PoolInside }).pool;
        pinnedSum += p.numBlocks - p.numFree;
        unk += unkeyedPinned(p);
      }
      unkeyedFrac.push(unk / capacity);
      if (i % 25 === 0) {
        const seen = new Set<number>();
        let keyed = 0;
        for (const e of es) {
          const p = (e as unknown as { pool: PoolInside }).pool;
          for (let s = 0; s < p.numBlocks; s++) {
            const k = p.keys[s]!;
            if (Number.isNaN(k)) continue;
            keyed++;
            seen.add(k);
          }
        }
        dupFrac.push((keyed - seen.size) / capacity);
      }
      pinnedN++;
      const now = w.requests[i]!.arrivalMs;
      const idx: number[] = [];
      for (let k = bestBlocks; k < oracle[i]! / bt; k++) {
        const key = blocks[k]!;
        const ev = lastEviction.get(key);
        const present = es.some((e) => (e as unknown as { pool: { longestPrefix: (ks: number[]) => number } }).pool.longestPrefix([key]) === 1);
        charges.push({ i, c: { tokens: bt, ev: present ? undefined : ev && { ...ev }, present, gapMs: ev ? now - ev.t : Number.NaN, rank: Number.NaN } });
        idx.push(charges.length - 1);
      }
      if (idx.length > 0) lostBlocks.set(i, idx);
    },
    done(i, _b, cached) {
      served[i] = cached;
    },
  });
  // The lost blocks' position in the pooled LRU at their request (newest = 0): a second pass of the same oracle.
  pooledOracleByRequest(w, capacity, (i, lru) => {
    const idx = lostBlocks.get(i);
    if (idx === undefined) return;
    const keys = w.promptBlocks[i]!;
    const want = new Map<number, number>();
    // The charges of request i are its blocks best/bt, best/bt + 1, … in order.
    const first = best[i]! / bt;
    idx.forEach((ci, o) => want.set(keys[first + o]!, ci));
    let rank = lru.size; // walk oldest → newest: newest has rank 0
    for (const k of lru.keys()) {
      rank--;
      const ci = want.get(k);
      if (ci !== undefined) charges[ci]!.c.rank = rank / capacity;
    }
  });
  // The pooled oracle with the KV running requests pin taken out (their mean share over arrivals).
  const pinnedFrac = pinnedSum / pinnedN / capacity;
  const reqs = w.requests.map((r, i) => ({ blocks: w.promptBlocks[i]!, promptTokens: r.promptTokens }));
  const oracleFull = oracleHitRate(reqs, capacity, bt);
  const oracleLessPinned = oracleHitRate(reqs, Math.floor(capacity * (1 - pinnedFrac)), bt);
  // …and with only the part no lookup can hit (running requests' output and part-filled blocks) taken out, at
  // its mean, p10 and p90 over arrivals.
  const lessUnkeyed = [0.1, 0.5, 0.9].map((q) => {
    const f = q === 0.5 ? unkeyedFrac.reduce((x, y) => x + y, 0) / unkeyedFrac.length : quantileOf(unkeyedFrac, q);
    return { f, o: oracleHitRate(reqs, Math.floor(capacity * (1 - f)), bt) };
  });
  const dup = [0.1, 0.5, 0.9].map((q) => quantileOf(dupFrac, q));
  const oracleLessDup = oracleHitRate(reqs, Math.floor(capacity * (1 - dup[1]! - lessUnkeyed[1]!.f)), bt);
  return { moved, tie, res, charges, reason, to, served, oracle, best, bt, n, pinnedFrac, oracleFull, oracleLessPinned, lessUnkeyed, dup, oracleLessDup, evicted: evictedBlocks, capacity, w };
}

// ---- the tables ----
const pct = (x: number, of: number) => `${((100 * x) / of).toFixed(1)}%`;
const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const rows = new Map<string, Map<string, number>>(); // table → row → tokens, pooled over seeds
let oracleAll = 0;
let servedAll = 0;
const add = (table: string, row: string, tokens: number) => {
  const t = rows.get(table) ?? new Map<string, number>();
  t.set(row, (t.get(row) ?? 0) + tokens);
  rows.set(table, t);
};
const idleAll: number[] = [];
const rankAll: number[] = [];
let tieUsed = 0;
const lines: string[] = [];
for (const seed of seeds) {
  const r = await audit(seed);
  tieUsed = r.tie;
  const oSum = r.oracle.reduce((x, y) => x + y, 0);
  const sSum = r.served.reduce((x, y) => x + y, 0);
  oracleAll += oSum;
  servedAll += sSum;
  const lost = r.charges.reduce((x, c) => x + c.c.tokens, 0);
  const promptSum = r.w.requests.reduce((x, q) => x + q.promptTokens, 0);
  lines.push(
    `seed ${seed}${whatIf ? ` (WHATIF=${whatIf} SLACK=${process.env.SLACK ?? "tie"}: ${r.moved} picks moved)` : ""}: p99 ${(r.res.ttftP99Ms / 1000).toFixed(3)} s, served ${pct(sSum, oSum)} of the oracle; unreachable ${pct(lost, oSum)} ` +
      `(${r.charges.length} blocks of ${r.bt} tokens); blocks evicted in the run ${r.evicted}; KV pinned by running requests ` +
      `${pct(r.pinnedFrac, 1)} of the fleet's on mean over arrivals; pooled oracle ${pct(r.oracleFull.hitRate, 1)} of prompt tokens, ` +
      `with the pinned share taken out ${pct(r.oracleLessPinned.hitRate, 1)} (= ${pct(r.oracleLessPinned.cachedTokens, oSum)} of the oracle); ` +
      `served ${pct(sSum, promptSum)} of prompt tokens; unkeyed pinned (output / part-filled blocks of running requests) ` +
      r.lessUnkeyed
        .map(({ f, o }, q) => `${["p10", "mean", "p90"][q]} ${pct(f, 1)} → pooled oracle ${pct(o.cachedTokens, oSum)} of the full one`)
        .join(", ") +
      `; duplicate copies (a key held by more than one engine, the extra copies) p10 ${pct(r.dup[0]!, 1)} median ${pct(r.dup[1]!, 1)} p90 ${pct(r.dup[2]!, 1)} of the fleet's KV; ` +
      `pooled oracle with the median duplicates and the mean unkeyed pinned taken out: ${pct(r.oracleLessDup.cachedTokens, oSum)} of the full one`,
  );
  for (const { i, c } of r.charges) {
    const t = c.tokens;
    add("total", "unreachable", t);
    if (c.present) {
      add("cause", "held on an engine behind a missing earlier block", t);
      continue;
    }
    if (c.ev === undefined) {
      add("cause", "never evicted: not yet cached anywhere (its first request still in flight or preempted)", t);
      continue;
    }
    const ev = c.ev;
    add("cause", "evicted (last copy) before the request", t);
    const by = ev.by;
    const byReason = by >= 0 ? r.reason[by]! : "?";
    add("evictor's placement", `${byReason}, ${ev.kind === "admit" ? "its admission" : "its growth (decode / later chunk)"}`, t);
    const share = by < 0 ? Number.NaN : r.served[by]! / r.w.requests[by]!.promptTokens;
    add(
      "evictor reused (its served hit / its prompt)",
      !(share >= 0) ? "?" : share === 0 ? "0" : share < 0.1 ? "< 10%" : share < 0.5 ? "10–50%" : "≥ 50%",
      t,
    );
    const bp = by < 0 ? Number.NaN : r.w.requests[by]!.promptTokens;
    add("evictor's prompt", !(bp >= 0) ? "?" : bp < 8e3 ? "< 8k tokens" : bp < 32e3 ? "8–32k" : bp < 64e3 ? "32–64k" : "≥ 64k", t);
    add(
      "another engine had empty free blocks for the allocation (engine truth)",
      ev.emptyElsewhere ? "yes: placed there, it would have evicted nothing" : "no",
      t,
    );
    add(
      "evictor same as the loser's engine",
      r.to[i] === ev.engine ? "request then went to the evicting engine" : "request went elsewhere",
      t,
    );
    const idle = ev.idle;
    idleAll.push(idle);
    add("idle at eviction", idle < 10e3 ? "< 10 s" : idle < 30e3 ? "10–30 s" : idle < 60e3 ? "30–60 s" : idle < 120e3 ? "60–120 s" : "≥ 120 s", t);
    add(
      "an older free block elsewhere (engine truth)",
      ev.olderElsewhere <= 0 ? "none older: the evicting engine's head was the fleet's oldest" : ev.olderElsewhere < 10e3 ? "older by < 10 s" : ev.olderElsewhere < 30e3 ? "older by 10–30 s" : "older by ≥ 30 s",
      t,
    );
    add("eviction → request", c.gapMs < 5e3 ? "< 5 s" : c.gapMs < 30e3 ? "5–30 s" : c.gapMs < 120e3 ? "30–120 s" : "≥ 120 s", t);
    rankAll.push(c.rank);
    add(
      "pooled LRU reuse distance / capacity",
      !(c.rank >= 0) ? "?" : c.rank < 0.5 ? "< 0.5" : c.rank < 0.7 ? "0.5–0.7" : c.rank < 0.85 ? "0.7–0.85" : "0.85–1",
      t,
    );
  }
}
console.log(`# ${spec} ${backends} ×${load} ${set}, ${preset}, prefix_aware at tie ${tieUsed} ms, seeds ${seeds.join(" ")}\n`);
for (const l of lines) console.log(`- ${l}`);
console.log(`\nPooled over the seeds: served ${pct(servedAll, oracleAll)} of the oracle. Every row in % of the pooled oracle.\n`);
for (const [table, t] of rows) {
  console.log(`| ${table} | % of oracle |\n| --- | --- |`);
  for (const [row, tokens] of [...t].sort((x, y) => y[1] - x[1])) console.log(`| ${row} | ${pct(tokens, oracleAll)} |`);
  console.log("");
}
console.log(
  `idle at eviction (per lost block): p10 ${sec(quantileOf(idleAll, 0.1))}, median ${sec(quantileOf(idleAll, 0.5))}, p90 ${sec(quantileOf(idleAll, 0.9))}; ` +
    `pooled reuse distance / capacity: p10 ${quantileOf(rankAll, 0.1).toFixed(2)}, median ${quantileOf(rankAll, 0.5).toFixed(2)}, p90 ${quantileOf(rankAll, 0.9).toFixed(2)}`,
);
