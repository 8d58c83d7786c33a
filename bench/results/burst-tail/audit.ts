// Burst tails on 8B: prefix_aware against llm-d on the same burst requests, with the engine model as ground
// truth. For every request: the backend each router chose, its burst (the group whose prefix it shares: its
// first block), the engine's own record of it (when the scheduler first gave it a prompt chunk, how many
// blocks it found cached then, the step that computed its last prompt token and what else that step
// prefilled) and its TTFT. Then, per router: how many backends each burst touched, and for the slowest 1%:
// which backend, how many of its burst's requests that backend took, cached or not, queue wait (arrival →
// first chunk) against prefill time (first chunk → first token), and whether another burst's cold prefill
// shared the step that produced the first token (a collision).
//   npx tsx bench/results/burst-tail/audit.ts WORKLOAD BACKENDS LOAD SET SEED PRESET [PEER]
//   e.g. ... audit.ts burst 8 28 none 1 llama-3.1-8b-h100-vllm llmd
//   SET "none": burst and burst-mooncake are in no tuning set (sim/eval-sets.ts), so their tuning stand-in
//   is seeds 1–2 with no set. SHOW=N rows of the slowest (default 12); PREDICTED=1 adds the ledger's prediction block.
// Engine internals are read through casts: an audit only, nothing here is used by the router or the simulator.
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import type { BlockKey, FleetView, RouteRequest } from "../../../src/routing/types";
import { routerFactory, type SimPolicyName, viewOf } from "../../../sim/policies";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { type RouterFactory, simulatePolicy } from "../../../sim/simulator";
import { loadAuditRunFromArgv, quantileOf, withTtft } from "../audit-run";
import { emptyStepRecord, type StepRecord, stepRecorder } from "./step-records";

const { spec, backends, load, set, seed, preset, w, fleet, extra } = await loadAuditRunFromArgv({
  spec: "burst",
  backends: 8,
  load: 28,
  set: "none",
  seed: 1,
  preset: "llama-3.1-8b-h100-vllm",
});
const peer = (extra[0] ?? "llmd") as SimPolicyName;
const n = w.requests.length;
const bt = w.blockTokens;
/** A request's burst: the first key of its prompt (each group's prefix is its own). */
const groupOf = w.promptBlocks.map((b) => b[0]!);


/**
 * SPLIT=K: an experiment, not a rule: a backend still computing a prefix takes at most K of our requests
 * that join it (matched there up to a block it is still computing); the next one is shut out as by the
 * shared-prefix cap and starts a copy elsewhere. K is a constant fitted to this workload's burst size
 * (16), so it only bounds what splitting a burst over two homes could buy.
 */
class SplitBurst extends PrefixAwarePolicy {
  private now = 0;
  private readonly joined = new Map<string, number>();
  constructor(private readonly k: number) {
    super();
    const pick = this.pick.bind(this);
    this.pick = (req, f, ctx) => {
      this.now = ctx.now;
      return pick(req, f, ctx);
    };
    const routed = this.onRouted.bind(this);
    this.onRouted = (req, index, f, ctx) => {
      const m = req.blocks.length > 0 ? f.matchedBlocks(req.blocks)[index]! : 0;
      if (m > 0 && this.computing(index, req.blocks[m - 1]!, ctx.now)) {
        const id = `${index}/${req.blocks[m - 1]}`;
        this.joined.set(id, (this.joined.get(id) ?? 0) + 1);
      }
      routed(req, index, f, ctx);
    };
  }
  private computing(i: number, key: BlockKey, now: number): boolean {
    return (this as unknown as { pending: { isPending(i: number, k: BlockKey, now: number): boolean } }).pending.isPending(i, key, now);
  }
  protected override overShareCap(req: RouteRequest, matched: Int32Array, fleet: FleetView, i: number): boolean {
    if (super.overShareCap(req, matched, fleet, i)) return true;
    const m = matched[i]!;
    if (m === 0 || !this.computing(i, req.blocks[m - 1]!, this.now)) return false;
    return (this.joined.get(`${i}/${req.blocks[m - 1]}`) ?? 0) >= this.k;
  }
}

interface Rec extends StepRecord {
  backend: number;
  reason: string;
  ttft: number;
  /** prefix_aware only: predicted cost per backend, and the predicted queue wait per backend. */
  cost?: number[];
  wait?: number[];
  /** prefix_aware only, per backend: the cost model's terms (ms): prefill of the uncached part, the rest of its cost (KV and in-flight terms), and the pending-prefill charge. */
  prefill?: number[];
  rest?: number[];
  charge?: number[];
}

function run(name: SimPolicyName) {
  const recs: Rec[] = Array.from({ length: n }, () => ({
    backend: -1,
    reason: "",
    ttft: Number.NaN,
    ...emptyStepRecord(),
  }));
  let pa: PrefixAwarePolicy | undefined;
  let makeRouter: RouterFactory = routerFactory(name, bt);
  const pre: Pick<Rec, "cost" | "wait" | "prefill" | "rest" | "charge">[] = [];
  if (name === "prefix_aware") {
    const split = process.env.SPLIT !== undefined ? Number(process.env.SPLIT) : undefined;
    // RATE=N (burst-s5): a counterfactual, not a rule: the cost model's prefill rate before any outcome is seen set
    // to N tok/s instead of the default 10,000 (what a prior taken from the engine would give).
    const opts = process.env.RATE !== undefined ? { defaultPrefillTokensPerSec: Number(process.env.RATE) } : {};
    if (split !== undefined && process.env.RATE !== undefined) throw new Error("SPLIT and RATE together are not supported");
    const policy = split === undefined ? new PrefixAwarePolicy(opts) : new SplitBurst(split);
    pa = policy;
    const inner = policy as unknown as { costs: Float64Array; work: Float64Array; past: Float64Array };
    const pick = policy.pick.bind(policy);
    // FORCE=I:B (burst-s5): a counterfactual, not a rule: request I (the I-th decision) goes to backend B whatever
    // the policy picked, everything else as the policy decides from there.
    const [forceI, forceB] = (process.env.FORCE ?? "-1:-1").split(":").map(Number) as [number, number];
    let calls = 0;
    policy.pick = (req, f, ctx) => {
      let r = pick(req, f, ctx);
      if (calls++ === forceI) r = { index: forceB, reason: r.reason };
      const out = req.outputTokens ?? 0;
      const unc = f.backends.map((_, j) => inner.work[j]! - out - inner.past[j]!);
      const base = f.backends.map((_, j) => policy.model.cost(j, unc[j]!, f.inflight[j]!, ctx.now, out + inner.past[j]!));
      const wait = f.backends.map((_, j) => policy.model.queueWaitMs(j, ctx.now));
      const prefill = unc.map((u, j) => policy.model.prefillMs(j, u));
      pre.push({
        cost: Array.from(inner.costs),
        wait,
        prefill,
        rest: base.map((b, j) => b - Math.max(wait[j]!, 0) - prefill[j]!),
        charge: base.map((b, j) => inner.costs[j]! - b),
      });
      return r;
    };
    makeRouter = (specs) => new Router(specs, { policy, blockTokens: bt });
  }
  const hook = stepRecorder(recs);
  const ttft = new Float64Array(n).fill(Number.NaN);
  const res = simulatePolicy(w, fleet, name, withTtft(makeRouter, ttft), pa ? GATEWAY_VIEW : viewOf(name), undefined, {
    routed(i, b, d, engines) {
      hook(engines);
      recs[i]!.backend = b;
      recs[i]!.reason = d.reason;
      if (pa) Object.assign(recs[i]!, pre[i]);
    },
  });
  for (let i = 0; i < n; i++) recs[i]!.ttft = ttft[i]!;
  return { recs, p50: res.ttftP50Ms, p99: res.ttftP99Ms, hit: res.hitRate };
}

const ms = (x: number) => `${x.toFixed(0)} ms`;
const ours = run("prefix_aware");
const theirs = run(peer);
const tailOf = (recs: Rec[]) =>
  [...recs.keys()].sort((a, b) => recs[b]!.ttft - recs[a]!.ttft).slice(0, Math.ceil(n / 100));
/** Cold: found under half its prompt cached (a burst's first request, or a copy of its prefix). */
const cold = (r: Rec, i: number) => r.hitBlocks * bt < w.requests[i]!.promptTokens / 2;
/** Another burst's cold prefill in the step that produced request i's first token. */
const collided = (recs: Rec[], i: number) =>
  recs[i]!.stepIds.some((j) => j !== i && groupOf[j] !== groupOf[i] && cold(recs[j]!, j));

console.log(`${spec} ${backends}b load ${load} set ${set} seed ${seed} ${preset}: ${n} requests, blocks of ${bt}`);
for (const [nm, o] of [["prefix_aware", ours], [peer, theirs]] as const) {
  const r = o.recs;
  // Backends per burst, and the burst's requests per backend used.
  const byGroup = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const g = groupOf[i]!;
    if (!byGroup.has(g)) byGroup.set(g, []);
    byGroup.get(g)!.push(i);
  }
  const spread = [...byGroup.values()].map((ids) => new Set(ids.map((i) => r[i]!.backend)).size);
  const colds = [...r.keys()].filter((i) => cold(r[i]!, i));
  const wait = [...r.keys()].map((i) => r[i]!.admitMs - w.requests[i]!.arrivalMs);
  const pf = [...r.keys()].map((i) => r[i]!.stepEnd - r[i]!.admitMs);
  const coll = [...r.keys()].filter((i) => collided(r, i));
  console.log(
    `\n${nm}: TTFT p50 ${ms(o.p50)} p99 ${ms(o.p99)} hit ${(o.hit * 100).toFixed(1)}%; backends per burst mean ${(spread.reduce((a, b) => a + b, 0) / spread.length).toFixed(2)} (max ${Math.max(...spread)}); ` +
      `cold prefills ${colds.length}; all requests: queue wait p50/p99 ${ms(quantileOf(wait, 0.5))}/${ms(quantileOf(wait, 0.99))}, prefill p50/p99 ${ms(quantileOf(pf, 0.5))}/${ms(quantileOf(pf, 0.99))}; ` +
      `first token in a step with another burst's cold prefill: ${coll.length} (their TTFT p50 ${ms(quantileOf(coll.map((i) => r[i]!.ttft), 0.5))}); ` +
      `cold prefills' TTFT p50/p99 ${ms(quantileOf(colds.map((i) => r[i]!.ttft), 0.5))}/${ms(quantileOf(colds.map((i) => r[i]!.ttft), 0.99))}, the others' ${ms(quantileOf([...r.keys()].filter((i) => !cold(r[i]!, i)).map((i) => r[i]!.ttft), 0.5))}/${ms(quantileOf([...r.keys()].filter((i) => !cold(r[i]!, i)).map((i) => r[i]!.ttft), 0.99))}`,
  );
}

const t = tailOf(ours.recs);
const tp = tailOf(theirs.recs);
const sameBurstThere = (recs: Rec[], i: number) =>
  [...recs.keys()].filter((j) => groupOf[j] === groupOf[i] && recs[j]!.backend === recs[i]!.backend).length;
for (const [label, ids] of [["prefix_aware's slowest 1%", t], [`${peer}'s slowest 1%`, tp]] as const) {
  console.log(`\n== ${label} (${ids.length} requests):`);
  for (const [nm, r] of [["prefix_aware", ours.recs], [peer, theirs.recs]] as const) {
    const q = (f: (i: number) => number, p: number) => quantileOf(ids.map(f), p);
    console.log(
      `  under ${nm}: TTFT p50 ${ms(q((i) => r[i]!.ttft, 0.5))}; queue wait p50 ${ms(q((i) => r[i]!.admitMs - w.requests[i]!.arrivalMs, 0.5))}, prefill p50 ${ms(q((i) => r[i]!.stepEnd - r[i]!.admitMs, 0.5))}; ` +
        `cold ${ids.filter((i) => cold(r[i]!, i)).length}; its burst's requests on its backend p50 ${q((i) => sameBurstThere(r, i), 0.5)}; ` +
        `first-token step prefill p50 ${q((i) => r[i]!.stepPrefill, 0.5)} tok, with another burst's cold prefill ${ids.filter((i) => collided(r, i)).length}; ` +
        `reasons ${JSON.stringify(ids.reduce<Record<string, number>>((a, i) => ((a[r[i]!.reason] = (a[r[i]!.reason] ?? 0) + 1), a), {}))}`,
    );
  }
}

const show = Number(process.env.SHOW ?? 12);
console.log(
  `\n== prefix_aware's slowest ${show}: i burst t | ours: TTFT, backend reason, burst's requests there, hit blocks, queue wait + prefill, first-token step (prefill tok, requests, other bursts' cold) | ${peer}: same`,
);
const row = (r: Rec[], i: number) => {
  const x = r[i]!;
  const others = x.stepIds.filter((j) => j !== i && groupOf[j] !== groupOf[i] && cold(r[j]!, j)).length;
  return `${ms(x.ttft)} b${x.backend} ${x.reason} ${sameBurstThere(r, i)} hit ${x.hitBlocks} wait ${ms(x.admitMs - w.requests[i]!.arrivalMs)} + prefill ${ms(x.stepEnd - x.admitMs)} step ${x.stepPrefill}/${x.stepIds.length}/${others}`;
};
for (const i of t.slice(0, show)) {
  console.log(
    `#${i} g${String(groupOf[i]).slice(0, 6)} t=${(w.requests[i]!.arrivalMs / 1000).toFixed(3)}s | ${row(ours.recs, i)} | ${row(theirs.recs, i)}`,
  );
}
const detail = Number(process.env.DETAIL ?? 4);
console.log(`\n== prefix_aware's slowest ${detail} in detail, per backend (ms): cost = queue wait + prefill + rest (KV, in-flight, memory) + pending-prefill charge`);
for (const i of t.slice(0, detail)) {
  const x = ours.recs[i]!;
  const f = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : "∞");
  console.log(`#${i}: ` + x.cost!.map((c, j) => `b${j} ${f(c)}=${f(x.wait![j]!)}+${f(x.prefill![j]!)}+${f(x.rest![j]!)}+${f(x.charge![j]!)}`).join("  "));
}

// PREDICTED=1 (near-miss): for prefix_aware's slowest 1%, the ledger's predicted TTFT on the chosen backend
// (queue wait + prefill) against the engine's, and the first-token step's requests split into those routed before
// the decision (known to the gateway) and after it.
if (process.env.PREDICTED === "1") {
  console.log(
    "\n== prefix_aware's slowest 1%: ledger's predicted TTFT on the chosen backend (queue wait + prefill) vs the engine's; the first-token step's requests routed before / after this one",
  );
  const rows: { pred: number; ttft: number; before: number; after: number; tokBefore: number; tokAfter: number }[] = [];
  for (const i of t) {
    const x = ours.recs[i]!;
    const pred = Math.max(x.wait![x.backend]!, 0) + x.prefill![x.backend]!;
    const others = x.stepIds.filter((j) => j !== i);
    const before = others.filter((j) => w.requests[j]!.arrivalMs <= w.requests[i]!.arrivalMs);
    const after = others.filter((j) => w.requests[j]!.arrivalMs > w.requests[i]!.arrivalMs);
    const suffix = (j: number) => w.requests[j]!.promptTokens - ours.recs[j]!.hitBlocks * bt;
    const r = {
      pred,
      ttft: x.ttft,
      before: before.length,
      after: after.length,
      tokBefore: before.reduce((a, j) => a + suffix(j), 0),
      tokAfter: after.reduce((a, j) => a + suffix(j), 0),
    };
    rows.push(r);
    console.log(
      `#${i}: predicted ${ms(pred)} (wait ${ms(x.wait![x.backend]!)} + prefill ${ms(x.prefill![x.backend]!)}), engine ${ms(x.ttft)} (wait ${ms(x.admitMs - w.requests[i]!.arrivalMs)} + step(s) ${ms(x.stepEnd - x.admitMs)}); ` +
        `first-token step: ${x.stepPrefill} tok, ${r.before} routed before (${r.tokBefore} tok), ${r.after} after (${r.tokAfter} tok)`,
    );
  }
  const avg = (f: (r: (typeof rows)[number]) => number) => rows.reduce((a, r) => a + f(r), 0) / Math.max(1, rows.length);
  console.log(
    `mean: predicted ${ms(avg((r) => r.pred))}, engine ${ms(avg((r) => r.ttft))}; first-token step: ${avg((r) => r.before).toFixed(1)} routed before (${avg((r) => r.tokBefore).toFixed(0)} tok), ${avg((r) => r.after).toFixed(1)} after (${avg((r) => r.tokAfter).toFixed(0)} tok)`,
  );
}

// TIMELINE=FROM,TO (seconds; burst-s5): every request arriving in that window under prefix_aware, in arrival order:
// its burst, backend, reason, blocks found cached, the ledger's predicted queue wait on the chosen backend and on
// every backend (ms), the engine's wait (arrival → first chunk) and first-token step (tokens / requests / other
// bursts' cold prefills in it), the TTFT, and the peer's TTFT on the same request. It shows a cluster of bursts as
// the gateway saw it, decision by decision.
if (process.env.TIMELINE) {
  const [from, to] = process.env.TIMELINE.split(",").map((s) => Number(s) * 1000) as [number, number];
  console.log(
    `\n== prefix_aware, requests arriving in ${from / 1000}–${to / 1000} s: i burst t | backend reason hit | predicted wait there [every backend] → engine wait + step | TTFT | ${peer}: backend TTFT`,
  );
  for (let i = 0; i < n; i++) {
    const a = w.requests[i]!.arrivalMs;
    if (a < from || a > to) continue;
    const x = ours.recs[i]!;
    const y = theirs.recs[i]!;
    const others = x.stepIds.filter((j) => j !== i && groupOf[j] !== groupOf[i] && cold(ours.recs[j]!, j)).length;
    console.log(
      `#${i} g${String(groupOf[i]).slice(0, 6)} t=${(a / 1000).toFixed(3)} | b${x.backend} ${x.reason} hit ${x.hitBlocks} | pred ${ms(x.wait![x.backend]!)} [${x.wait!.map((v) => v.toFixed(0)).join(" ")}] → ${ms(x.admitMs - a)} + ${ms(x.stepEnd - x.admitMs)} step ${x.stepPrefill}/${x.stepIds.length}/${others} | ${ms(x.ttft)} | b${y.backend} ${ms(y.ttft)}`,
    );
  }
}

// SWAP=i,j,... (burst-s5): a counterfactual p99 with the listed requests given the peer's TTFT (every other request
// keeps ours; knock-on effects ignored): how much of our tail those requests make.
if (process.env.SWAP) {
  const ids = new Set(process.env.SWAP.split(",").map(Number));
  const t2 = ours.recs.map((r, i) => (ids.has(i) ? theirs.recs[i]!.ttft : r.ttft));
  const p99 = quantileOf(t2, 0.99);
  console.log(
    `\n== counterfactual: ${ids.size} requests at ${peer}'s TTFT: p99 ${ms(p99)} (ours ${ms(ours.p99)}, ${peer} ${ms(theirs.p99)}; ${(((p99 - theirs.p99) / theirs.p99) * 100).toFixed(1)}% vs ${peer})`,
  );
}

// RATEWALK=1 (burst-s5): the ledger's prefill estimate against the engine's over the run. For cold requests (a
// burst's first prefill or a copy), per second of arrival: the cost model's predicted prefill on the chosen backend
// (its uncached tokens at the learned rate) against the engine's (first chunk → first token), mean over the second.
if (process.env.RATEWALK === "1") {
  console.log("\n== prefix_aware's cold prefills by second of arrival: n, predicted prefill → engine's (mean ms), ratio");
  const by = new Map<number, { n: number; pred: number; eng: number }>();
  for (let i = 0; i < n; i++) {
    const x = ours.recs[i]!;
    if (!cold(x, i)) continue;
    const sec = Math.floor(w.requests[i]!.arrivalMs / 1000);
    const b = by.get(sec) ?? { n: 0, pred: 0, eng: 0 };
    b.n++;
    b.pred += x.prefill![x.backend]!;
    b.eng += x.stepEnd - x.admitMs;
    by.set(sec, b);
  }
  for (const [sec, b] of [...by.entries()].sort((a, c) => a[0] - c[0]).slice(0, 12))
    console.log(`${sec}–${sec + 1} s: ${b.n}, ${ms(b.pred / b.n)} → ${ms(b.eng / b.n)}, ${(b.pred / b.eng).toFixed(2)}`);
}
