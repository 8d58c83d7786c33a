// First (cold) prefills against backends whose joiners wait: what a rule "a cold prefill avoids a backend where
// k ≥ 1 of our requests wait for a pending prefill's shared step" would have changed, measured on one run of
// prefix_aware (engine model as ground truth). For each request the audit records, at its routing decision:
//   - per backend, k_i: our requests joined to a block that backend still computes (PendingPrefill's joiner
//     counts whose prefill has not ended), and the cost pick() summed (Infinity: out of its bound or shut);
//   - whether it is cold where it went (the chosen backend held under half its prompt, as burst-tail/audit.ts);
// and from the engine: the step that produced each request's first token and who else prefilled in it.
// A collision: a cold prefill sharing the first-token step of another prefix's requests that were cache hits.
// For each cold decision with k ≥ 1 at the chosen backend, it prints the best alternative with k = 0 and its
// cost gap, against the mirror of the burst split's (b) term, k × prefill(its uncached part there).
//   npx tsx bench/results/first-prefill/collide.ts WORKLOAD BACKENDS LOAD SET SEED PRESET
// Engine and policy internals are read through casts: an audit only, nothing here is used by the router.
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import type { BlockKey } from "../../../src/routing/types";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { type RouterFactory, simulatePolicy } from "../../../sim/simulator";
import { BURST_8B_SEED_80, loadAuditRunFromArgv, quantileOf, withTtft } from "../audit-run";
import { emptyStepRecord, type StepRecord, stepRecorder } from "../burst-tail/step-records";

const { spec, backends, load, set, seed, preset, w, fleet } = await loadAuditRunFromArgv(BURST_8B_SEED_80);
const n = w.requests.length;
const bt = w.blockTokens;
const groupOf = w.promptBlocks.map((b) => b[0]!);

interface PendingInside {
  byBackend: Map<BlockKey, number>[];
  joiners: Map<BlockKey, { count: number; end: number }>[];
}
interface Decision {
  now: number;
  cost: number[];
  k: number[];
  /** prefill of the request's uncached part per backend (cost model), ms */
  prefill: number[];
  /** per backend, whether the request matched nothing useful there (under the policy's minimum match) */
  fresh: boolean[];
}
interface Rec extends StepRecord {
  backend: number;
  ttft: number;
  d?: Decision;
}

const recs: Rec[] = Array.from({ length: n }, () => ({
  backend: -1,
  ttft: Number.NaN,
  ...emptyStepRecord(),
}));
const policy = new PrefixAwarePolicy();
const inner = policy as unknown as { costs: Float64Array; work: Float64Array; past: Float64Array; pending: PendingInside };
const decisions: Decision[] = [];
const pick = policy.pick.bind(policy);
policy.pick = (req, f, ctx) => {
  const r = pick(req, f, ctx);
  const out = req.outputTokens ?? 0;
  const p = inner.pending;
  const k = f.backends.map((_, i) => {
    let c = 0;
    for (const [key, j] of p.joiners[i] ?? new Map()) if (j.end > ctx.now && p.byBackend[i]!.get(key) === j.end) c += j.count;
    return c;
  });
  decisions.push({
    now: ctx.now,
    cost: Array.from(inner.costs),
    k,
    prefill: f.backends.map((_, i) => policy.model.prefillMs(i, inner.work[i]! - out - inner.past[i]!)),
    fresh: Array.from(req.blocks.length > 0 ? f.matchedBlocks(req.blocks) : new Int32Array(f.backends.length), (m) => m * bt < 64),
  });
  return r;
};
const makeRouter: RouterFactory = (specs) => new Router(specs, { policy, blockTokens: bt });
const hook = stepRecorder(recs);
const ttft = new Float64Array(n).fill(Number.NaN);
const res = simulatePolicy(w, fleet, "prefix_aware", withTtft(makeRouter, ttft), GATEWAY_VIEW, undefined, {
  routed(i, b, _d, engines) {
    hook(engines);
    recs[i]!.backend = b;
    recs[i]!.d = decisions[decisions.length - 1];
  },
});
for (let i = 0; i < n; i++) recs[i]!.ttft = ttft[i]!;

const cold = (i: number) => recs[i]!.hitBlocks * bt < w.requests[i]!.promptTokens / 2;
/** Cache hits of another prefix whose first-token step carried cold prefill i's chunks (i's victims). */
const victimsOf = new Map<number, number[]>();
for (let v = 0; v < n; v++) {
  if (cold(v)) continue;
  for (const j of recs[v]!.stepIds) {
    if (j === v || groupOf[j] === groupOf[v] || !cold(j)) continue;
    if (!victimsOf.has(j)) victimsOf.set(j, []);
    victimsOf.get(j)!.push(v);
  }
}
const p99 = res.ttftP99Ms;
const slow = new Set([...recs.keys()].sort((a, b) => recs[b]!.ttft - recs[a]!.ttft).slice(0, Math.ceil(n / 100)));
console.log(`${spec} ${backends}b load ${load} set ${set} seed ${seed} ${preset}: ${n} requests; prefix_aware p99 ${p99.toFixed(1)} ms`);
const colds = [...recs.keys()].filter(cold);
const atK = colds.filter((i) => recs[i]!.d!.k[recs[i]!.backend]! >= 1);
console.log(`cold prefills ${colds.length}; sent where k ≥ 1: ${atK.length}; cold prefills with victims (cache hits of another prefix in the step of their first token): ${victimsOf.size}, victims ${[...victimsOf.values()].reduce((a, v) => a + v.length, 0)}, of them in the slowest 1%: ${[...victimsOf.values()].flat().filter((v) => slow.has(v)).length}`);
const withVictimAtK = [...victimsOf.keys()].filter((i) => recs[i]!.d!.k[recs[i]!.backend]! >= 1);
console.log(`cold prefills with victims that were sent where k ≥ 1 at their decision: ${withVictimAtK.length} of ${victimsOf.size}`);
// Rules, per cold decision at k ≥ 1: the best alternative with k = 0 (finite cost), gap = its cost − the chosen cost.
let tie = 0;
let mirror = 0;
let none = 0;
const rows: string[] = [];
for (const i of atK) {
  const r = recs[i]!;
  const d = r.d!;
  const b = r.backend;
  let alt = -1;
  for (let j = 0; j < d.cost.length; j++)
    if (j !== b && d.k[j] === 0 && Number.isFinite(d.cost[j]!) && (alt < 0 || d.cost[j]! < d.cost[alt]!)) alt = j;
  const gap = alt < 0 ? Number.POSITIVE_INFINITY : d.cost[alt]! - d.cost[b]!;
  const charge = d.k[b]! * d.prefill[b]!;
  if (alt < 0) none++;
  if (gap <= 1) tie++;
  if (gap < charge) mirror++;
  const v = victimsOf.get(i) ?? [];
  rows.push(
    `#${i} t=${(d.now / 1000).toFixed(3)}s g${String(groupOf[i]).slice(0, 6)} → b${b} k=${d.k[b]} cost ${d.cost[b]!.toFixed(0)} prefill ${d.prefill[b]!.toFixed(0)} | best k=0: ${alt < 0 ? "none" : `b${alt} cost ${d.cost[alt]!.toFixed(0)} gap ${gap.toFixed(0)}`} | k×prefill ${charge.toFixed(0)} | victims ${v.length} (slowest 1%: ${v.filter((x) => slow.has(x)).length}), victims' TTFT p50 ${v.length ? quantileOf(v.map((x) => recs[x]!.ttft), 0.5).toFixed(0) : "-"}`,
  );
}
console.log(`of the ${atK.length}: an alternative with k = 0 within 1 ms (equally soon): ${tie}; one cheaper than cost + k × prefill (the mirror term): ${mirror}; no k = 0 alternative within bounds: ${none}`);
const show = Number(process.env.SHOW ?? 40);
for (const row of rows.slice(0, show)) console.log(row);
// The slowest 1%: their first-token step's cold prefills, and where those were sent (k there at their decision).
console.log("\nslowest 1%:");
for (const i of [...slow].sort((a, b) => recs[b]!.ttft - recs[a]!.ttft)) {
  const r = recs[i]!;
  const cs = r.stepIds.filter((j) => j !== i && groupOf[j] !== groupOf[i] && cold(j));
  console.log(
    `#${i} g${String(groupOf[i]).slice(0, 6)} ${r.ttft.toFixed(0)} ms b${r.backend} ${cold(i) ? "cold" : "hit"} step ${r.stepPrefill} tok; other prefixes' cold in step: ${cs.map((j) => `#${j}(k=${recs[j]!.d!.k[recs[j]!.backend]})`).join(" ") || "-"}`,
  );
}
// The cold prefills with victims, every backend at their decision: cost (∞ out of bound or shut) and k.
console.log("\ncold prefills with victims, per backend at the decision (cost/k/prefill of its uncached part):");
for (const i of victimsOf.keys()) {
  const d = recs[i]!.d!;
  const f = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : "∞");
  console.log(`#${i} → b${recs[i]!.backend}: ` + d.cost.map((c, j) => `b${j} ${f(c)}/${d.k[j]}/${f(d.prefill[j]!)}`).join("  "));
}

// The mirror charge: every backend where the request matches nothing useful is charged k × prefill of its
// uncached part there; the decisions whose cheapest backend (ties aside) would change, and how.
let flips = 0;
const flipRows: string[] = [];
for (let i = 0; i < n; i++) {
  const d = recs[i]!.d!;
  const b = recs[i]!.backend;
  if (!Number.isFinite(d.cost[b]!)) continue;
  let best = b;
  let bestCost = d.cost[b]! + (d.fresh[b] ? d.k[b]! * d.prefill[b]! : 0);
  for (let j = 0; j < d.cost.length; j++) {
    if (!Number.isFinite(d.cost[j]!)) continue;
    const c = d.cost[j]! + (d.fresh[j] ? d.k[j]! * d.prefill[j]! : 0);
    if (c < bestCost - 1) {
      bestCost = c;
      best = j;
    }
  }
  if (best === b) continue;
  flips++;
  const v = victimsOf.get(i) ?? [];
  flipRows.push(`#${i} t=${(d.now / 1000).toFixed(3)}s ${cold(i) ? "cold" : "hit"} b${b} (k=${d.k[b]}, cost ${d.cost[b]!.toFixed(0)}) → b${best} (k=${d.k[best]}, cost ${d.cost[best]!.toFixed(0)}); its TTFT ${recs[i]!.ttft.toFixed(0)} ms; victims ${v.length}`);
}
console.log(`\nthe mirror charge (k × prefill where it matches nothing) would change ${flips} decisions (first-order, before any knock-on):`);
for (const r of flipRows.slice(0, show)) console.log(r);
