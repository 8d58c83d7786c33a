// The burst split's copies and the backends left without a joiner waiting: measured on one run of prefix_aware.
// At every decision the audit records, per backend, k_i (our requests joined to a block it still computes,
// PendingPrefill's joiner counts whose prefill has not ended) and whether it is idle for a prefill (within its
// bound, healthy, queue and memory waits zero: the split's guard's own test). For each copy the split starts it
// prints the guard's inputs (idle, others being computed) and the clean backends (k = 0, within bound, healthy),
// and for each new prefix's first prefill (a cold request whose prefix no backend holds) whether any clean
// backend was left, and which kind of routing had made each unclean backend so (a first prefill, a split copy,
// or a cold spill past a bound).
//   npx tsx bench/results/copy-guard/copies.ts WORKLOAD BACKENDS LOAD SET SEED PRESET
// Policy internals are read through casts: an audit only, nothing here is used by the router.
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import type { BlockKey, FleetView, RouteRequest } from "../../../src/routing/types";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { type RouterFactory, simulatePolicy } from "../../../sim/simulator";
import { BURST_8B_SEED_80, loadAuditRunFromArgv, quantileOf, withTtft } from "../audit-run";

const { w, fleet, backends } = await loadAuditRunFromArgv(BURST_8B_SEED_80);
const n = w.requests.length;

interface PendingInside {
  byBackend: Map<BlockKey, number>[];
  joiners: Map<BlockKey, { count: number; end: number }>[];
}
interface Inside {
  costs: Float64Array;
  pending: PendingInside;
  fresh: { othersPending(prefix: BlockKey, now: number): number };
  startWaitMs(i: number, now: number): number;
  splitsBurst(...a: unknown[]): boolean;
}
const policy = new PrefixAwarePolicy();
const inner = policy as unknown as Inside;
const kOf = (i: number, now: number) => {
  let c = 0;
  const p = inner.pending;
  for (const [key, j] of p.joiners[i] ?? new Map()) if (j.end > now && p.byBackend[i]!.get(key) === j.end) c += j.count;
  return c;
};
let split = false;
let lastCopy: { now: number; idle: number; clean: number; others: number; cleanIdle: number } | undefined;
const copies: { now: number; idle: number; clean: number; others: number; cleanIdle: number }[] = [];
const splits = inner.splitsBurst.bind(policy);
inner.splitsBurst = (...a: unknown[]) => {
  const req = a[0] as RouteRequest;
  const f = a[5] as FleetView;
  const now = a[6] as number;
  let idle = 0;
  let clean = 0;
  let cleanIdle = 0;
  for (let i = 0; i < inner.costs.length; i++) {
    const within = inner.costs[i] !== Number.POSITIVE_INFINITY && f.healthy[i] === true;
    if (!within) continue;
    const isIdle = !(inner.startWaitMs(i, now) > 0);
    const isClean = kOf(i, now) === 0;
    if (isIdle) idle++;
    if (isClean) clean++;
    if (isIdle && isClean) cleanIdle++;
  }
  const others = inner.fresh.othersPending(req.blocks[0]!, now);
  const r = splits(...a);
  split = r;
  if (r) {
    lastCopy = { now, idle, clean, others, cleanIdle };
    copies.push(lastCopy);
  }
  return r;
};
type Kind = "first" | "copy" | "spill";
/** Per backend, the kind of the last cold routing there (what its joiners, if any, joined). */
const madeBy: (Kind | "-")[] = Array.from({ length: backends }, () => "-");
const held = new Set<BlockKey>();
const firsts: { id: number; now: number; clean: number; k: number; kinds: string }[] = [];
/** Every cold routing: when, where, which prefix, which kind, how many backends were clean before it. */
const colds: { id: number; now: number; to: number; prefix: BlockKey; kind: Kind; clean: number }[] = [];
const pick = policy.pick.bind(policy);
let current:
  | { id: number; now: number; k: number[]; first: boolean; kind: Kind | undefined; prefix: BlockKey }
  | undefined;
let nextId = 0;
policy.pick = (req, f, ctx) => {
  split = false;
  const k = f.backends.map((_, i) => kOf(i, ctx.now));
  const m = req.blocks.length > 0 ? f.matchedBlocks(req.blocks) : new Int32Array(f.backends.length);
  const first = req.blocks.length > 0 && !held.has(req.blocks[0]!);
  const r = pick(req, f, ctx);
  const to = (r as { index?: number }).index ?? -1;
  const cold = to >= 0 && m[to] === 0;
  const kind: Kind | undefined = !cold ? undefined : first ? "first" : split ? "copy" : "spill";
  current = { id: nextId++, now: ctx.now, k, first, kind, prefix: req.blocks[0]! };
  if (req.blocks.length > 0) held.add(req.blocks[0]!);
  return r;
};
const makeRouter: RouterFactory = (specs) => new Router(specs, { policy, blockTokens: w.blockTokens });
const ttft = new Float64Array(n).fill(Number.NaN);
simulatePolicy(w, fleet, "prefix_aware", withTtft(makeRouter, ttft), GATEWAY_VIEW, undefined, {
  routed(_i: number, b: number) {
    const c = current;
    if (c === undefined) return;
    if (c.kind === "first") {
      const clean = c.k.filter((x) => x === 0).length;
      firsts.push({ id: _i, now: c.now, clean, k: c.k[b]!, kinds: c.k.map((x, i) => (x === 0 ? "." : madeBy[i]![0])).join("") });
    }
    if (c.kind !== undefined) {
      madeBy[b] = c.kind;
      colds.push({ id: _i, now: c.now, to: b, prefix: c.prefix, kind: c.kind, clean: c.k.filter((x) => x === 0).length });
    }
  },
});
const p99 = quantileOf(Array.from(ttft).filter((x) => !Number.isNaN(x)), 0.99);
console.log(`requests ${n}; prefix_aware TTFT p99 ${p99.toFixed(1)} ms`);
console.log(`split copies ${copies.length}; with others ≥ 1: ${copies.filter((c) => c.others > 0).length}`);
for (const c of copies)
  console.log(
    `  copy t=${(c.now / 1000).toFixed(3)}s others ${c.others} idle ${c.idle} clean ${c.clean} clean∧idle ${c.cleanIdle}` +
      (c.others > 0 && c.clean - 1 < c.others + 1 ? "  ← clean − 1 < others + 1" : "") +
      (c.idle !== c.cleanIdle ? "  ← an idle backend has a joiner waiting" : ""),
  );
const kinds = (k: Kind) => colds.filter((c) => c.kind === k).length;
console.log(`cold routings: first prefills ${kinds("first")}, split copies ${kinds("copy")}, other cold spills ${kinds("spill")}`);
const none = firsts.filter((f) => f.clean === 0);
console.log(`first prefills ${firsts.length}; sent where k ≥ 1: ${firsts.filter((f) => f.k > 0).length}; with no clean backend: ${none.length}`);
console.log("  (per backend: '.' nobody waiting, else the kind of the last cold routing there: f first, c copy, s spill)");
for (const f of firsts.filter((x) => x.k > 0)) console.log(`  #${f.id} t=${(f.now / 1000).toFixed(3)}s k there ${f.k} clean ${f.clean} ${f.kinds}`);
// Before each first prefill left with no clean backend: the cold routings of the 0.5 s before it.
for (const f of none) {
  console.log(`  cold routings in the 0.5 s before #${f.id} (clean = backends with nobody waiting, before it):`);
  for (const c of colds)
    if (c.now > f.now - 500 && c.now <= f.now)
      console.log(`    #${c.id} t=${(c.now / 1000).toFixed(3)}s ${c.kind} → b${c.to} prefix ${String(c.prefix).slice(-6)} clean ${c.clean}`);
}
