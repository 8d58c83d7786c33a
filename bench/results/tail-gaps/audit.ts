// Decision audit of the slowest 1% (TTFT) of prefix_aware against one peer on the same requests, for any
// workload of the race (synthetic or trace), aimed at the shared-prefix request cap: for every request it
// records where each router sent it, the reason, how much of its prefix the chosen backend held against the
// best holder, whether the cap (src/routing/shared-prefixes.ts) shut a longer holder out, and what the
// chosen engine was doing at the decision (its waiting queue and its prefill in progress).
//   npx tsx bench/results/tail-gaps/audit.ts WORKLOAD BACKENDS LOAD SET SEED PRESET PEER   (SHOW=N rows)
//   e.g. ... audit.ts generated-shared-prefix 8 45 tuning 2 qwen3-30b-a3b-h100-vllm sglang
//   LOAD is req/s for a synthetic workload, the replay speed for mooncake (MOONCAKE_TRACE set); SET "none"
//   for a seed in neither set; REQUESTS=N as bench/sim-all.sh's --requests (multi-turn: 10000).
// Engine internals are read through casts: an audit only, nothing here is used by the router or the simulator.
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import type { FleetView, RouteRequest } from "../../../src/routing/types";
import type { EngineModel } from "../../../sim/model/engine-model";
import { routerFactory, type SimPolicyName, viewOf } from "../../../sim/policies";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { type RouterFactory, simulatePolicy } from "../../../sim/simulator";
import { type EngineInside, loadAuditRunFromArgv, withTtft } from "../audit-run";

const { spec, backends, load, set, seed, preset, w, fleet, extra } = await loadAuditRunFromArgv({
  spec: "generated-shared-prefix",
  backends: 8,
  load: 45,
  set: "tuning",
  seed: 2,
  preset: "qwen3-30b-a3b-h100-vllm",
});
const peer = extra[0] ?? "sglang";
const bt = w.blockTokens;
const n = w.requests.length;

interface Rec {
  backend: number;
  reason: string;
  ttft: number;
  /** Blocks of the prompt the chosen engine held (engine truth) and the most any engine held. */
  engineHeld: number;
  engineBest: number;
  waiting: number;
  waitingTokens: number;
  prefilling: number;
  /** prefix_aware only: backends the shared-prefix cap shut out that held more of the prefix (index view). */
  capShut?: number;
  /** prefix_aware only: index match on the chosen backend and the longest. */
  matchChosen?: number;
  matchBest?: number;
  cost?: number;
  costOthersMin?: number;
  inflightChosen?: number;
  /** prefix_aware only, per backend: predicted cost, our requests in flight, predicted queue wait, our held KV tokens. */
  all?: { cost: number[]; inflight: number[]; wait: number[]; held: number[] };
}


function run(name: SimPolicyName) {
  const recs: Rec[] = new Array(n);
  const pre: Partial<Rec>[] = [];
  let pa: PrefixAwarePolicy | undefined;
  let makeRouter: RouterFactory = routerFactory(name, bt);
  if (name === "prefix_aware") {
    // SHARED_FLOOR=N: the cap's floor F for an experiment (a huge N turns the cap off); the default otherwise.
    const policy = new PrefixAwarePolicy({
      ...(process.env.SHARED_FLOOR !== undefined ? { sharedFloor: Number(process.env.SHARED_FLOOR) } : {}),
      // TIE=ms: another tie tolerance, a perturbation of no meaning that shows how far p99 moves by chance.
      ...(process.env.TIE !== undefined ? { tieToleranceMs: Number(process.env.TIE) } : {}),
    });
    pa = policy;
    // NO_JOINERS=1: the policy without the joiners' charge, to compare decisions. Only at commit 3d411f8,
    // where the charge was tried (reverted since: bench/results/policy-work.md, "Tail gaps").
    if (process.env.NO_JOINERS === "1") {
      const j = (policy as unknown as { joiners?: { waiting(): number } }).joiners;
      if (j === undefined) throw new Error("NO_JOINERS=1: this policy has no joiners' charge (check out 3d411f8)");
      j.waiting = () => 0;
    }
    const inner = policy as unknown as {
      overShareCap(req: RouteRequest, m: Int32Array, f: FleetView, i: number): boolean;
      costs: Float64Array;
    };
    const cap = inner.overShareCap.bind(policy);
    let shut: number[] = [];
    inner.overShareCap = (req, m, f, i) => {
      const r = cap(req, m, f, i);
      if (r) shut.push(m[i]!);
      return r;
    };
    const pick = policy.pick.bind(policy);
    policy.pick = (req, f, ctx) => {
      shut = [];
      const r = pick(req, f, ctx);
      const m = req.blocks.length > 0 ? f.matchedBlocks(req.blocks) : new Int32Array(f.backends.length);
      const best = Math.max(...m);
      pre.push({
        capShut: shut.filter((x) => x > m[r.index]!).length,
        matchChosen: m[r.index]!,
        matchBest: best,
        cost: inner.costs[r.index]!,
        costOthersMin: Math.min(...Array.from(inner.costs).filter((_, j) => j !== r.index)),
        inflightChosen: f.inflight[r.index]!,
        all: {
          cost: Array.from(inner.costs),
          inflight: Array.from(f.inflight),
          wait: f.backends.map((_, j) => policy.model.queueWaitMs(j, ctx.now)),
          held: f.backends.map((_, j) => policy.model.heldTokens(j)),
        },
      });
      return r;
    };
    makeRouter = (specs) => new Router(specs, { policy, blockTokens: bt });
  }
  const ttft = new Float64Array(n).fill(Number.NaN);
  const res = simulatePolicy(w, fleet, name, withTtft(makeRouter, ttft), pa ? GATEWAY_VIEW : viewOf(name), undefined, {
    routed(i, b, d, engines) {
      const now = w.requests[i]!.arrivalMs;
      const held = engines.map((e) => {
        e.metrics(now);
        return (e as unknown as EngineInside).pool.longestPrefix(w.promptBlocks[i]!);
      });
      const x = engines[b] as unknown as EngineInside;
      const q = x.scheduler.waiting.slice(x.scheduler.waitHead);
      recs[i] = {
        backend: b,
        reason: d.reason,
        ttft: Number.NaN,
        engineHeld: held[b]!,
        engineBest: Math.max(...held),
        waiting: q.length,
        waitingTokens: q.reduce((a, r) => a + r.promptTokens, 0),
        prefilling: x.scheduler.admitted,
        ...(pa ? pre[i] : {}),
      };
    },
  });
  for (let i = 0; i < n; i++) recs[i]!.ttft = ttft[i]!;
  return { recs, p50: res.ttftP50Ms, p99: res.ttftP99Ms, hit: res.hitRate };
}

const ours = run("prefix_aware");
const theirs = run(peer as SimPolicyName);
const ms = (x: number) => `${x.toFixed(0)} ms`;
function pct(xs: number[], p: number): number {
  const a = [...xs].sort((x, y) => x - y);
  return a.length === 0 ? Number.NaN : a[Math.min(a.length - 1, Math.floor((p / 100) * a.length))]!;
}
const tailOf = (recs: Rec[]) => [...recs.keys()].sort((a, b) => recs[b]!.ttft - recs[a]!.ttft).slice(0, Math.ceil(n / 100));
const t = tailOf(ours.recs);
const tp = tailOf(theirs.recs);
console.log(`${spec} ${backends}b load ${load} ${set} seed ${seed} ${preset}: ${n} requests, blocks of ${bt}`);
console.log(`prefix_aware p50 ${ms(ours.p50)} p99 ${ms(ours.p99)} hit ${(ours.hit * 100).toFixed(1)}% | ${peer} p50 ${ms(theirs.p50)} p99 ${ms(theirs.p99)} hit ${(theirs.hit * 100).toFixed(1)}%`);
const count = (f: (r: Rec) => boolean, ids: number[], recs: Rec[]) => ids.filter((i) => f(recs[i]!)).length;
for (const [label, ids] of [["prefix_aware's slowest 1%", t], [`${peer}'s slowest 1%`, tp]] as const) {
  console.log(`\n== ${label} (${ids.length}):`);
  for (const [nm, r] of [["prefix_aware", ours.recs], [peer, theirs.recs]] as const) {
    console.log(
      `  under ${nm}: TTFT p50 ${ms(pct(ids.map((i) => r[i]!.ttft), 50))}; chosen engine held less than the best holder on ${count((x) => x.engineHeld < x.engineBest, ids, r)}; ` +
        `held nothing while another held some on ${count((x) => x.engineHeld === 0 && x.engineBest > 0, ids, r)}; waiting queue p50 ${pct(ids.map((i) => r[i]!.waiting), 50)} (${pct(ids.map((i) => r[i]!.waitingTokens), 50)} tok); prefilling p50 ${pct(ids.map((i) => r[i]!.prefilling), 50)}`,
    );
  }
  const o = ours.recs;
  const reasons: Record<string, number> = {};
  for (const i of ids) reasons[o[i]!.reason] = (reasons[o[i]!.reason] ?? 0) + 1;
  console.log(`  prefix_aware's reasons ${JSON.stringify(reasons)}; the share cap shut out a longer holder on ${count((x) => (x.capShut ?? 0) > 0, ids, o)}`);
}
{
  const o = ours.recs;
  const capped = [...o.keys()].filter((i) => (o[i]!.capShut ?? 0) > 0);
  console.log(
    `\n== all requests where the share cap shut out a longer holder: ${capped.length} of ${n}; their TTFT p50 ${ms(pct(capped.map((i) => o[i]!.ttft), 50))} p99 ${ms(pct(capped.map((i) => o[i]!.ttft), 99))}; ` +
      `same requests under ${peer}: p50 ${ms(pct(capped.map((i) => theirs.recs[i]!.ttft), 50))} p99 ${ms(pct(capped.map((i) => theirs.recs[i]!.ttft), 99))}; ` +
      `chosen engine held nothing of it ${count((x) => x.engineHeld === 0, capped, o)}`,
  );
}
const show = Number(process.env.SHOW ?? 20);
console.log(`\n== prefix_aware's slowest ${show}: i, TTFT (peer's) | ours: backend reason, index match chosen/best (blocks), engine held/best, cap shut, in-flight there, waiting (tok), prefilling, cost/others' min | peer: backend, held/best, waiting`);
for (const i of t.slice(0, show)) {
  const r = ours.recs[i]!;
  const p = theirs.recs[i]!;
  const q = w.requests[i]!;
  console.log(
    `#${i} t=${(q.arrivalMs / 1000).toFixed(2)}s prompt ${q.promptTokens} out ${q.outputTokens} ${ms(r.ttft)} (${ms(p.ttft)}) | b${r.backend} ${r.reason} match ${r.matchChosen}/${r.matchBest} held ${r.engineHeld}/${r.engineBest} shut ${r.capShut} inflight ${r.inflightChosen} waiting ${r.waiting} (${r.waitingTokens}) prefilling ${r.prefilling} cost ${r.cost!.toFixed(0)}/${r.costOthersMin!.toFixed(0)} | b${p.backend} held ${p.engineHeld}/${p.engineBest} waiting ${p.waiting}`,
  );
}

const detail = Number(process.env.DETAIL ?? 3);
console.log(`\n== prefix_aware's slowest ${detail} in detail, per backend: cost ms / our in-flight / queue wait ms / our held k-tokens`);
for (const i of t.slice(0, detail)) {
  const a = ours.recs[i]!.all!;
  console.log(
    `#${i}: ` + a.cost.map((c, j) => `b${j} ${Number.isFinite(c) ? c.toFixed(0) : "∞"}/${a.inflight[j]}/${a.wait[j]!.toFixed(0)}/${(a.held[j]! / 1000).toFixed(0)}`).join("  "),
  );
}

// Full prefills and the requests that shared their engine (branch gsp-first-prefill): a request whose chosen
// engine held under half its prompt prefills most of it; the requests routed to the same engine while it was
// waiting for its first token (arrival → arrival + TTFT) share its steps or queue behind it. Per router: how
// many such full prefills, how many requests shared each one's wait, and how slow those were; then, for
// prefix_aware's slowest 1%, which were full prefills and which shared a full prefill's wait.
{
  const fullOf = (recs: Rec[]) =>
    [...recs.keys()].filter((i) => recs[i]!.engineHeld * bt < w.requests[i]!.promptTokens / 2);
  const matesOf = (recs: Rec[], f: number) => {
    const from = w.requests[f]!.arrivalMs;
    const to = from + recs[f]!.ttft;
    const out: number[] = [];
    for (let j = f + 1; j < n && w.requests[j]!.arrivalMs <= to; j++) if (recs[j]!.backend === recs[f]!.backend) out.push(j);
    return out;
  };
  console.log(`\n== full prefills (chosen engine held under half the prompt) and the requests routed to the same engine during their wait:`);
  const sharedBy: Record<string, Set<number>> = {};
  for (const [nm, r] of [["prefix_aware", ours.recs], [peer, theirs.recs]] as const) {
    const full = fullOf(r);
    const mates = full.map((f) => matesOf(r, f));
    const all = mates.flat();
    sharedBy[nm] = new Set(all);
    const inflightRank = nm === "prefix_aware"
      ? full.map((f) => { const a = r[f]!.all!; return a.inflight.filter((x, j) => Number.isFinite(a.cost[j]!) && x < a.inflight[r[f]!.backend]!).length; })
      : [];
    console.log(
      `  ${nm}: ${full.length} full prefills (TTFT p50 ${ms(pct(full.map((i) => r[i]!.ttft), 50))}); requests sharing their wait ${all.length} ` +
        `(per prefill p50 ${pct(mates.map((m) => m.length), 50)}, max ${Math.max(0, ...mates.map((m) => m.length))}; their TTFT p50 ${ms(pct(all.map((i) => r[i]!.ttft), 50))} p99 ${ms(pct(all.map((i) => r[i]!.ttft), 99))}); ` +
        `other requests' TTFT p50 ${ms(pct([...r.keys()].filter((i) => !sharedBy[nm]!.has(i) && !full.includes(i)).map((i) => r[i]!.ttft), 50))}` +
        (nm === "prefix_aware" ? `; open backends with fewer of our requests in flight than the chosen one, p50 ${pct(inflightRank, 50)}` : ""),
    );
  }
  const o = ours.recs;
  const fullSet = new Set(fullOf(o));
  console.log(
    `  prefix_aware's slowest 1%: full prefills ${t.filter((i) => fullSet.has(i)).length}, shared a full prefill's wait ${t.filter((i) => sharedBy.prefix_aware!.has(i)).length}, neither ${t.filter((i) => !fullSet.has(i) && !sharedBy.prefix_aware!.has(i)).length} of ${t.length}`,
  );
}

// WINDOW=a,b (seconds): every decision of prefix_aware in that span of arrival time, with its outcome.
if (process.env.WINDOW !== undefined) {
  const [from, to] = process.env.WINDOW.split(",").map(Number) as [number, number];
  console.log(`\n== prefix_aware's decisions arriving in [${from}, ${to}] s: i, arrival, prompt, first key, TTFT (peer's) | backend reason match held shut | cost per backend`);
  for (let i = 0; i < n; i++) {
    const q = w.requests[i]!;
    if (q.arrivalMs / 1000 < from || q.arrivalMs / 1000 > to) continue;
    const r = ours.recs[i]!;
    console.log(
      `#${i} t=${(q.arrivalMs / 1000).toFixed(3)}s prompt ${q.promptTokens} key ${String(w.promptBlocks[i]![0]).slice(0, 6)} ${ms(r.ttft)} (${ms(theirs.recs[i]!.ttft)} b${theirs.recs[i]!.backend}) | b${r.backend} ${r.reason} match ${r.matchChosen}/${r.matchBest} held ${r.engineHeld}/${r.engineBest} shut ${r.capShut} waiting ${r.waiting} prefilling ${r.prefilling} | ` +
        r.all!.cost.map((c, j) => `${Number.isFinite(c) ? c.toFixed(0) : "∞"}/${r.all!.inflight[j]}`).join(" "),
    );
  }
}
