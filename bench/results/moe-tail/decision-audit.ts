// Decision audit of the slowest 1% (TTFT) of prefix_aware and of Dynamo on a trace run of the tuning set.
// For every request it records what the router saw and what the engines held at the decision; for the tail
// it prints who they are (prompt, cached, output), what was queued ahead of them on the chosen engine (waiting
// requests and their prompt tokens, KV free against what the request needs), whether another engine could
// have started it at once, and (prefix_aware) what the cost model predicted against what happened.
//   MOONCAKE_TRACE=... npx tsx bench/results/moe-tail/decision-audit.ts [backends] [speed] [preset]   (SHOW=N rows)
// Engine internals are read through casts: an audit only, nothing here is used by the router or the simulator.
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import type { EngineModel } from "../../../sim/model/engine-model";
import { routerFactory, viewOf } from "../../../sim/policies";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { type RouterFactory, simulatePolicy } from "../../../sim/simulator";
import { type EngineInside, loadAuditRun, withTtft } from "../audit-run";

const [backendsS = "8", speedS = "2", preset = "qwen3-30b-a3b-h100-vllm"] = process.argv.slice(2);
const backends = Number(backendsS);
const speed = Number(speedS);
const seed = 1;
const { w, fleet } = await loadAuditRun({ spec: "mooncake", backends, load: speed, set: "tuning", seed, preset });
const bt = w.blockTokens;
const n = w.requests.length;

/** One engine's state as a request arrives: its queue, its free KV, and what the request would need there. */
interface EngineAt {
  waiting: number;
  waitingTokens: number;
  /** Prompt tokens of the first request in the engine's waiting queue (0: none): FCFS admits nobody past it. */
  headTokens: number;
  /** The queue's head cannot be admitted now: its KV need is above the free blocks (vLLM stops there). */
  headBlocked: boolean;
  /** KV tokens referenced by requests in the engine (admitted ones hold prompt + output). */
  usedTokens: number;
  prefilling: number;
  decoding: number;
  freeBlocks: number;
  cachedBlocks: number;
  needBlocks: number;
}
interface Rec {
  backend: number;
  at: EngineAt[];
  ttft: number;
  cached: number;
  /** prefix_aware only: predicted cost at each backend (ms), predicted queue wait, our held tokens. */
  costs?: number[];
  wait?: number[];
  held?: number[];
  /** prefix_aware only, on the chosen backend: the engine's committed KV (used + what its queue needs) − our ledger, and its parts. */
  cachedAtRoute?: number;
  gap?: { committed: number; ledger: number; outputMissing: number; cachedPart: number };
}

function engineAt(e: EngineModel, i: number, now: number): EngineAt {
  e.metrics(now); // brings the engine to `now`
  const x = e as unknown as EngineInside;
  const s = x.scheduler;
  const queue = s.waiting.slice(s.waitHead);
  const r = w.requests[i]!;
  const cachedBlocks = x.pool.longestPrefix(w.promptBlocks[i]!);
  const head = queue[0] as { promptTokens: number; outputTokens: number; blocks: readonly number[] } | undefined;
  const headNeed =
    head === undefined
      ? 0
      : Math.ceil((head.promptTokens + head.outputTokens) / bt) - x.pool.longestPrefix(head.blocks);
  return {
    headTokens: head?.promptTokens ?? 0,
    headBlocked: head !== undefined && headNeed > x.pool.numFree,
    usedTokens: (x.pool.numBlocks - x.pool.numFree) * bt,
    waiting: queue.length,
    waitingTokens: queue.reduce((a, q) => a + q.promptTokens, 0),
    prefilling: s.admitted,
    decoding: x.batch.size,
    freeBlocks: x.pool.numFree,
    cachedBlocks,
    needBlocks: Math.ceil((r.promptTokens + Math.max(1, r.outputTokens)) / bt) - cachedBlocks,
  };
}


interface Run {
  recs: Rec[];
  p50: number;
  p99: number;
  rate?: number;
}

function run(policyName: "prefix_aware" | "dynamo"): Run {
  const recs: Rec[] = new Array(n);
  let next = 0;
  let pa: PrefixAwarePolicy | undefined;
  let makeRouter: RouterFactory = routerFactory(policyName, bt);
  if (policyName === "prefix_aware") {
    const policy = new PrefixAwarePolicy();
    pa = policy;
    const pick = policy.pick.bind(policy);
    policy.pick = (req, f, ctx) => {
      const r = pick(req, f, ctx);
      const c = policy as unknown as { costs: Float64Array };
      const size = f.backends.length;
      recs[next++] = {
        backend: r.index,
        at: [],
        ttft: Number.NaN,
        cached: 0,
        costs: Array.from(c.costs),
        wait: Array.from({ length: size }, (_, j) => policy.model.queueWaitMs(j, ctx.now)),
        held: Array.from({ length: size }, (_, j) => policy.model.heldTokens(j)),
      };
      return r;
    };
    makeRouter = (specs) => new Router(specs, { policy, blockTokens: bt });
  }
  const ttft = new Float64Array(n).fill(Number.NaN);
  const onBackend: Set<number>[] = Array.from({ length: backends }, () => new Set());
  const res = simulatePolicy(
    w,
    fleet,
    policyName,
    withTtft(makeRouter, ttft),
    pa ? GATEWAY_VIEW : viewOf(policyName),
    undefined,
    {
      routed(i, b, _d, engines) {
        const now = w.requests[i]!.arrivalMs;
        const rec = recs[i] ?? { backend: b, at: [], ttft: Number.NaN, cached: 0 };
        rec.backend = b;
        rec.at = engines.map((e) => engineAt(e, i, now));
        if (pa) {
          const a = rec.at[b]!;
          const x = engines[b] as unknown as EngineInside;
          const queue = x.scheduler.waiting.slice(x.scheduler.waitHead) as unknown as {
            promptTokens: number;
            outputTokens: number;
            blocks: readonly number[];
          }[];
          const queued = queue.reduce(
            (t, q) => t + (Math.ceil((q.promptTokens + q.outputTokens) / bt) - x.pool.longestPrefix(q.blocks)) * bt,
            0,
          );
          let outputMissing = 0;
          let cachedPart = 0;
          for (const j of onBackend[b]!) {
            outputMissing += Math.max(1, w.requests[j]!.outputTokens) - (w.maxTokens[j] ?? 0);
            cachedPart += recs[j]!.cachedAtRoute ?? 0;
          }
          rec.gap = { committed: a.usedTokens + queued, ledger: pa.model.heldTokens(b) - (rec.held?.[b] === undefined ? 0 : 0), outputMissing, cachedPart };
        }
        rec.cachedAtRoute = rec.at[b]!.cachedBlocks * bt;
        onBackend[b]!.add(i);
        recs[i] = rec;
      },
      done(i, b, c) {
        onBackend[b]!.delete(i);
        recs[i]!.cached = c;
      },
    },
  );
  for (let i = 0; i < n; i++) recs[i]!.ttft = ttft[i]!;
  return { recs, p50: res.ttftP50Ms, p99: res.ttftP99Ms, ...(pa ? { rate: pa.model.prefillTokensPerSec(0) } : {}) };
}

const runs = { prefix_aware: run("prefix_aware"), dynamo: run("dynamo") } as const;
const names = ["prefix_aware", "dynamo"] as const;
const other = { prefix_aware: "dynamo", dynamo: "prefix_aware" } as const;
const k = (x: number) => `${(x / 1000).toFixed(1)}k`;
const s = (x: number) => `${(x / 1000).toFixed(2)} s`;
function pct(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const a = [...xs].sort((x, y) => x - y);
  return a[Math.min(a.length - 1, Math.floor((p / 100) * a.length))]!;
}
const share = (xs: boolean[]) => `${((100 * xs.filter(Boolean).length) / Math.max(1, xs.length)).toFixed(0)}%`;
/** The chosen engine could not admit the request at once: others waiting, or its KV need above the free blocks. */
const queuedAt = (a: EngineAt) => a.waiting > 0 || a.needBlocks > a.freeBlocks;
const memBlocked = (a: EngineAt) => a.needBlocks > a.freeBlocks;
const tailOf = (r: Run) => {
  const order = [...r.recs.keys()].sort((a, b) => r.recs[b]!.ttft - r.recs[a]!.ttft);
  return order.slice(0, Math.ceil(n / 100));
};
const tails = { prefix_aware: tailOf(runs.prefix_aware), dynamo: tailOf(runs.dynamo) };

console.log(`mooncake tuning half, ${n} requests, ${backends} backends, speed ${speed}, ${preset}; blocks of ${bt}`);
for (const p of names) {
  const r = runs[p];
  console.log(
    `${p}: TTFT p50 ${s(r.p50)} p99 ${s(r.p99)}${r.rate ? `; learned prefill rate ${r.rate.toFixed(0)} tok/s` : ""}`,
  );
}

console.log("\n== TTFT by prompt length (all requests): p50 / p99 / count");
const buckets = [0, 4096, 8192, 16384, 32768, 65536, 1e9];
for (let b = 0; b + 1 < buckets.length; b++) {
  const ids = [...Array(n).keys()].filter(
    (i) => w.requests[i]!.promptTokens >= buckets[b]! && w.requests[i]!.promptTokens < buckets[b + 1]!,
  );
  const cols = names.map((p) => {
    const t = ids.map((i) => runs[p].recs[i]!.ttft);
    return `${p} ${s(pct(t, 50))} / ${s(pct(t, 99))}`;
  });
  console.log(`[${k(buckets[b]!)}, ${buckets[b + 1]! > 1e8 ? "∞" : k(buckets[b + 1]!)}) n=${ids.length}: ${cols.join(" | ")}`);
}

for (const p of names) {
  const r = runs[p];
  const t = tails[p];
  const o = runs[other[p]];
  const chosen = t.map((i) => r.recs[i]!.at[r.recs[i]!.backend]!);
  const prompts = t.map((i) => w.requests[i]!.promptTokens);
  console.log(`\n== ${p}: its slowest 1% (${t.length} requests, TTFT ≥ ${s(r.recs[t[t.length - 1]!]!.ttft)})`);
  console.log(
    `prompt tokens p10/p50/p90 ${k(pct(prompts, 10))} / ${k(pct(prompts, 50))} / ${k(pct(prompts, 90))} (all requests p50 ${k(pct(w.requests.map((q) => q.promptTokens), 50))}); ` +
      `cached p50 ${k(pct(t.map((i) => r.recs[i]!.cached), 50))}; output p50 ${pct(t.map((i) => w.requests[i]!.outputTokens), 50)}; ` +
      `max_tokens sent on ${share(t.map((i) => w.maxTokens[i] !== undefined))}`,
  );
  console.log(
    `at the decision, on the chosen engine: could not start at once ${share(chosen.map(queuedAt))}; ` +
      `KV need above free blocks ${share(chosen.map(memBlocked))}; waiting requests p50 ${pct(chosen.map((a) => a.waiting), 50)} ` +
      `(prompt tokens waiting p50 ${k(pct(chosen.map((a) => a.waitingTokens), 50))}, p90 ${k(pct(chosen.map((a) => a.waitingTokens), 90))}); ` +
      `prefilling p50 ${pct(chosen.map((a) => a.prefilling), 50)}; decoding p50 ${pct(chosen.map((a) => a.decoding), 50)}; ` +
      `free KV p50 ${k(pct(chosen.map((a) => a.freeBlocks * bt), 50))} tokens vs need p50 ${k(pct(chosen.map((a) => a.needBlocks * bt), 50))}`,
  );
  console.log(
    `  queue head KV-blocked at the decision ${share(chosen.map((a) => a.headBlocked))}; ` +
      `of the tail prompts under 32k tokens (${t.filter((i) => w.requests[i]!.promptTokens < 32768).length}): behind a KV-blocked head ${share(t.filter((i) => w.requests[i]!.promptTokens < 32768).map((i) => r.recs[i]!.at[r.recs[i]!.backend]!.headBlocked))}, ` +
      `head prompt p50 ${k(pct(t.filter((i) => w.requests[i]!.promptTokens < 32768).map((i) => r.recs[i]!.at[r.recs[i]!.backend]!.headTokens), 50))}`,
  );
  const elsewhere = t.map((i) => {
    const rec = r.recs[i]!;
    return queuedAt(rec.at[rec.backend]!) && rec.at.some((a, j) => j !== rec.backend && !queuedAt(a));
  });
  console.log(`another engine could have started it at once (no queue, KV fits) while the chosen could not: ${share(elsewhere)}`);
  const otherT = t.map((i) => o.recs[i]!.ttft);
  const inOther = new Set(tails[other[p]]);
  console.log(
    `the same requests under ${other[p]}: TTFT p50 ${s(pct(otherT, 50))}; ${t.filter((i) => inOther.has(i)).length} of ${t.length} also in ${other[p]}'s slowest 1%`,
  );
  if (p === "prefix_aware") {
    const ratio = t.map((i) => r.recs[i]!.ttft / Math.max(1, r.recs[i]!.costs![r.recs[i]!.backend]!));
    console.log(
      `actual TTFT ÷ predicted cost at the chosen backend: p10/p50/p90 ${pct(ratio, 10).toFixed(1)} / ${pct(ratio, 50).toFixed(1)} / ${pct(ratio, 90).toFixed(1)} ` +
        `(all requests p50 ${pct(r.recs.map((q) => q.ttft / Math.max(1, q.costs![q.backend]!)), 50).toFixed(1)})`,
    );
  }
}

{
  const cap = fleet.kvCacheTokens;
  const r = runs.prefix_aware;
  const full = r.recs.filter((x) => x.gap !== undefined && x.gap.committed + x.at[x.backend]!.needBlocks * bt > cap);
  const g = (f: (x: Rec) => number) => k(pct(full.map(f), 50));
  console.log(
    `\n== prefix_aware's ledger against the engine, at decisions where the chosen engine's committed KV (used + its queue's need) plus the request's need exceeded its ${k(cap)} capacity (${full.length} of ${n}): ` +
      `engine committed p50 ${g((x) => x.gap!.committed)}, our ledger p50 ${g((x) => x.gap!.ledger)} (ledger + request's own need over capacity on ${share(full.map((x) => x.gap!.ledger + x.at[x.backend]!.needBlocks * bt > cap))}); ` +
      `output the ledger misses (true − max_tokens sent, in-flight) p50 ${g((x) => x.gap!.outputMissing)}; cached prompt blocks held p50 ${g((x) => x.gap!.cachedPart)}; ` +
      `their TTFT p50 ${s(pct(full.map((x) => x.ttft), 50))} p99 ${s(pct(full.map((x) => x.ttft), 99))}`,
  );
}

console.log("\n== all requests: arrivals that could not start at once on their chosen engine, and their TTFT");
for (const p of names) {
  const r = runs[p];
  const q = r.recs.map((x) => queuedAt(x.at[x.backend]!));
  const m = r.recs.map((x) => memBlocked(x.at[x.backend]!));
  const tq = r.recs.filter((_, i) => q[i]).map((x) => x.ttft);
  const avoidable = r.recs.filter((x) => queuedAt(x.at[x.backend]!) && x.at.some((a, j) => j !== x.backend && !queuedAt(a)));
  console.log(
    `${p}: queued ${share(q)} (KV-blocked ${share(m)}), their TTFT p50 ${s(pct(tq, 50))} p99 ${s(pct(tq, 99))}; ` +
      `queued while another engine was free ${((100 * avoidable.length) / n).toFixed(1)}%; ` +
      `behind a KV-blocked head ${share(r.recs.map((x) => x.at[x.backend]!.headBlocked))}, their TTFT p50 ${s(pct(r.recs.filter((x) => x.at[x.backend]!.headBlocked).map((x) => x.ttft), 50))}`,
  );
}

const show = Number(process.env.SHOW ?? 25);
console.log(`\n== prefix_aware's slowest ${show}: i, TTFT (dynamo's), prompt (gateway's), cached, output (max_tokens sent) | chosen engine at the decision | predicted cost chosen / min of the others; predicted queue wait; our held k-tokens`);
for (const i of tails.prefix_aware.slice(0, show)) {
  const r = runs.prefix_aware.recs[i]!;
  const a = r.at[r.backend]!;
  const othersMin = Math.min(...r.costs!.filter((_, j) => j !== r.backend));
  const q = w.requests[i]!;
  console.log(
    `#${i} ${s(r.ttft)} (${s(runs.dynamo.recs[i]!.ttft)}) prompt ${k(q.promptTokens)} (${k(w.gatewayPromptTokens[i]!)}) cached ${k(r.cached)} out ${q.outputTokens} (${w.maxTokens[i] ?? "-"}) ` +
      `| b${r.backend} waiting ${a.waiting} (${k(a.waitingTokens)} tok, head ${k(a.headTokens)}${a.headBlocked ? " blocked" : ""}) used ${k(a.usedTokens)} prefilling ${a.prefilling} decoding ${a.decoding} free ${k(a.freeBlocks * bt)} need ${k(a.needBlocks * bt)} ` +
      `| cost ${r.costs![r.backend]!.toFixed(0)} / ${othersMin.toFixed(0)} wait ${r.wait!.map((x) => x.toFixed(0)).join(",")} held ${r.held!.map((x) => (x / 1000).toFixed(0)).join(",")}`,
  );
}
