// Where prefix_aware's hit falls short, in tokens: for every request whose hit is below what the best engine
// held of its prompt when it was routed, why. One run of a race workload as bench/sim-all.sh runs it
// (prefix_aware, the gateway's request view, no scrape), watched decision by decision.
//   npx tsx bench/results/hit-gaps/breakdown.ts WORKLOAD BACKENDS LOAD SET SEED PRESET
//   e.g. REQUESTS=10000 npx tsx bench/results/hit-gaps/breakdown.ts multi-turn 8 40 tuning 2 qwen3-30b-a3b-h100-vllm
//        MOONCAKE_TRACE=... npx tsx bench/results/hit-gaps/breakdown.ts mooncake 8 2.45 tuning 1 llama-3.1-8b-h100-vllm
// The policy's private state (its per-backend costs, its work bound) is read through casts: an audit only,
// nothing here is used by the router or the simulator, and the run is the one bench:sim makes (checked:
// the hit rate and p99 printed here equal the report's).
//
// Per request, tokens a hit could cover (the prompt less its last token, as vLLM): present_j what engine j
// held at the decision (the engine model, read-only), best = max_j present_j on the holder h, hit what the
// chosen engine c reported. lost = best − hit, split exactly into
//   evicted:   present_c − hit (> 0): c held it at the decision and lost it before the request was scheduled
//              (when c is the holder, this is "the holder evicted it by the time it ran");
//   placement: best − max(present_c, hit): the request went to an engine that held less. Why, from the
//              policy's view of the holder at the decision (b_j: what the index believed engine j held):
//     - over-belief: b_c ≥ b_h and b_c > present_c, the index believed the chosen one held it;
//     - under-belief: b_h ≤ b_c otherwise, the index did not know the holder had more; the part of the
//       holder's prefix past the gateway's key window is shown apart (the index cannot see it);
//     - the index knew (b_h > b_c) and the holder was shut out by the work bound (../../../src/routing/work-bound.ts)
//       or by the shared-prefix request cap (../../../src/routing/shared-prefixes.ts);
//     - the index knew and the holder was a candidate: a tie within the tolerance (the ring's probe order
//       decided), or the cost model priced the holder higher, by Δ = cost_h − cost_c ms (bucketed).
// Besides: the pooled oracle's hit (sim/oracle.ts) against Σ best, the part no engine held at the decision
// (the partition of the fleet's cache by earlier placements, and evictions).
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import type { FleetView, RouteRequest } from "../../../src/routing/types";
import { oracleHitRate } from "../../../sim/oracle";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { simulatePolicy } from "../../../sim/simulator";
import { loadAuditRunFromArgv } from "../audit-run";

const { spec, backends, load, set, seed, preset, w, fleet } = await loadAuditRunFromArgv({
  spec: "multi-turn",
  backends: 8,
  load: 40,
  set: "tuning",
  seed: 1,
  preset: "qwen3-30b-a3b-h100-vllm",
});
const bt = w.blockTokens;
const n = w.requests.length;

/** Why backend j was not a candidate at the last pick. */
const CANDIDATE = 0;
const WORK_BOUND = 1;
const SHARED_CAP = 2;

const policy = new PrefixAwarePolicy();
const inside = policy as unknown as {
  overShareCap(req: RouteRequest, m: Int32Array, f: FleetView, i: number): boolean;
  bound: { fits(f: FleetView, i: number, x: number, work: unknown): boolean };
  costs: Float64Array;
  work: Float64Array;
  /** Tokens expected cached past the key window, still counted as work (absent before commit 15295c7). */
  past?: Float64Array;
  tolerance: number;
};
let shut = new Uint8Array(0);
const cap = inside.overShareCap.bind(policy);
inside.overShareCap = (req, m, f, i) => {
  const r = cap(req, m, f, i);
  if (r) shut[i] = SHARED_CAP;
  return r;
};
const fits = inside.bound.fits.bind(inside.bound);
inside.bound.fits = (f, i, x, work) => {
  const r = fits(f, i, x, work);
  if (!r) shut[i] = WORK_BOUND;
  return r;
};
interface Pick {
  believed: Int32Array;
  shut: Uint8Array;
  costs: Float64Array;
  /** Per backend at the decision: the cost model's queue wait (ms) and work held (tokens); the fleet's work. */
  wait: Float64Array;
  held: Float64Array;
  fleetWork: number;
  /** The policy's work per backend (uncached prompt as it expects it + output) and the output it counted. */
  work: Float64Array;
  past: Float64Array | undefined;
  output: number;
}
let last: Pick | undefined;
const pick = policy.pick.bind(policy);
policy.pick = (req, f, ctx) => {
  shut = new Uint8Array(f.backends.length);
  const believed = req.blocks.length > 0 ? f.matchedBlocks(req.blocks).slice() : new Int32Array(f.backends.length);
  const r = pick(req, f, ctx);
  const size = f.backends.length;
  const wait = new Float64Array(size);
  const held = new Float64Array(size);
  let fleetWork = 0;
  for (let j = 0; j < size; j++) {
    wait[j] = policy.model.queueWaitMs(j, ctx.now);
    held[j] = policy.model.heldTokens(j);
    fleetWork += held[j]!;
  }
  last = { believed, shut, costs: inside.costs.slice(), wait, held, fleetWork, work: inside.work.slice(), past: inside.past?.slice(), output: req.outputTokens ?? 0 };
  return r;
};

/**
 * The engine's own prefill backlog at the decision, ms: the uncached tokens of the requests waiting in its
 * queue (less what its cache holds of each now) and what is left of the prompt part-way through prefill,
 * at the preset's prefill rate. A lower bound of the wait (running decodes and step overheads left out),
 * to set beside the cost model's virtual queue (`wait`).
 */
function engineBacklogMs(e: unknown): number {
  const x = e as {
    config: { prefillTokensPerSec: number };
    pool: { longestPrefix(keys: readonly number[]): number };
    scheduler: {
      waiting: { promptTokens: number; blocks: readonly number[] }[];
      waitHead: number;
      partial: { promptTokens: number; computed: number } | null;
    };
  };
  let tokens = 0;
  const q = x.scheduler.waiting;
  for (let j = x.scheduler.waitHead; j < q.length; j++)
    tokens += Math.max(0, q[j]!.promptTokens - x.pool.longestPrefix(q[j]!.blocks) * bt);
  const p = x.scheduler.partial;
  if (p !== null) tokens += Math.max(0, p.promptTokens - p.computed);
  return (1000 * tokens) / x.config.prefillTokensPerSec;
}
let backlogMs: number[] = [];

interface Decision {
  reusable: number;
  window: number;
  chosen: number;
  holder: number;
  best: number;
  present: number;
  pick: Pick;
  /** The engine's prefill backlog per backend at the decision, ms (engineBacklogMs). */
  backlog: number[];
}
const decisions: (Decision | undefined)[] = new Array(n);

class Bucket {
  requests = 0;
  tokens = 0;
  add(t: number) {
    if (t <= 0) return;
    this.requests++;
    this.tokens += t;
  }
}
const LABELS = [
  "evicted: the chosen engine held it at the decision, lost it before the request ran",
  "  … the chosen engine was the holder",
  "  … the chosen engine held part, the holder more",
  "placement: sent to an engine that held less than the holder",
  "  … over-belief: the index believed the chosen engine held it",
  "  … under-belief: the index did not know the holder had more (within the key window)",
  "  … under-belief: the holder's prefix past the key window (the index cannot see it)",
  "  … the holder was shut out by the work bound",
  "  … the holder was shut out by the shared-prefix request cap",
  "  … a tie within the tolerance (the ring's probe order)",
  "  … the cost model priced the holder higher by ≤ 10 ms",
  "  … … by 10–50 ms",
  "  … … by 50–200 ms",
  "  … … by 200 ms–1 s",
  "  … … by > 1 s",
  "of the losses where the index knew: the holder held past the key window, the index saw the window only",
] as const;
const b = Object.fromEntries(LABELS.map((l) => [l, new Bucket()])) as Record<(typeof LABELS)[number], Bucket>;
const costGaps: { ms: number; tokens: number }[] = [];
/** Cost losses by more than 50 ms: the cost model's queue wait and the engine's backlog, holder and chosen, token-weighted. */
const queues = { n: 0, tokens: 0, predictedHolder: 0, predictedChosen: 0, engineHolder: 0, engineChosen: 0 };
const cut = { requests: 0, expected: 0, present: 0, over: 0, under: 0 };
const d_window = (i: number) => w.gatewayBlocks[i]!.length * bt;
/** SHOW=N: the N largest placement losses, one line each. */
const shown: { tokens: number; line: string }[] = [];
let sumReusable = 0;
let sumBest = 0;
let sumHit = 0;
let sumPrompt = 0;
let gained = 0;

// Every SAMPLE_EVERY decisions past the first quarter of the run (caches filled), the fleet's KV: blocks holding a reusable prompt key, and how many of those
// keys are copies of a key another engine also holds (the partition's cost against one pooled cache).
const SAMPLE_EVERY = 200;
const kvSamples = { blocks: 0, keyed: 0, distinct: 0, n: 0 };
function sampleFleet(engines: readonly unknown[]) {
  const seen = new Set<number>();
  for (const e of engines) {
    const pool = (e as { pool: { numBlocks: number; keys: Float64Array } }).pool;
    kvSamples.blocks += pool.numBlocks;
    for (const key of pool.keys) {
      if (Number.isNaN(key)) continue;
      kvSamples.keyed++;
      seen.add(key);
    }
  }
  kvSamples.distinct += seen.size;
  kvSamples.n++;
}
const res = simulatePolicy(
  w,
  fleet,
  "prefix_aware",
  (specs) => new Router(specs, { policy, blockTokens: bt }),
  GATEWAY_VIEW,
  undefined,
  {
    routed(i, chosen, _d, engines) {
      if (i % SAMPLE_EVERY === 0 && i >= n / 4) sampleFleet(engines);
      const req = w.requests[i]!;
      const reusable = Math.max(0, Math.floor((req.promptTokens - 1) / bt)) * bt;
      const p = last!;
      last = undefined;
      const present = engines.map((e) => Math.min(reusable, e.cachedPrefixBlocks(w.promptBlocks[i]!) * bt));
      backlogMs = engines.map(engineBacklogMs);
      const best = Math.max(...present);
      // The holder: the chosen engine if it held as much as any, else, among those that held the most, the
      // one the index rated highest (the most favourable reading for the index).
      let holder = chosen;
      if (present[chosen]! < best) {
        holder = present.indexOf(best);
        for (let j = 0; j < present.length; j++)
          if (present[j] === best && p.believed[j]! > p.believed[holder]!) holder = j;
      }
      // Prompts the key window cut: the policy's expected cached tokens on the chosen engine against what
      // that engine held (both within the prompt less its last token).
      if (reusable > d_window(i)) {
        const expected = Math.min(reusable, Math.max(0, w.gatewayPromptTokens[i]! - (p.work[chosen]! - p.output - (p.past?.[chosen] ?? 0))));
        cut.requests++;
        cut.expected += expected;
        cut.present += present[chosen]!;
        cut.over += Math.max(0, expected - present[chosen]!);
        cut.under += Math.max(0, present[chosen]! - expected);
      }
      decisions[i] = {
        reusable,
        window: Math.min(reusable, w.gatewayBlocks[i]!.length * bt),
        chosen,
        holder,
        best,
        present: present[chosen]!,
        pick: p,
        backlog: backlogMs,
      };
    },
    done(i, _backend, cachedTokens) {
      const d = decisions[i]!;
      decisions[i] = undefined;
      const hit = Math.min(d.reusable, cachedTokens);
      sumReusable += d.reusable;
      sumBest += d.best;
      sumHit += hit;
      sumPrompt += w.requests[i]!.promptTokens;
      if (hit > d.best) gained += hit - d.best;
      const evicted = Math.max(0, d.present - hit);
      b[LABELS[0]].add(evicted);
      b[d.holder === d.chosen ? LABELS[1] : LABELS[2]].add(evicted);
      const placed = Math.max(0, d.best - Math.max(d.present, hit));
      if (placed <= 0) return;
      b[LABELS[3]].add(placed);
      const p = d.pick;
      const bh = Math.min(d.reusable, p.believed[d.holder]! * bt);
      const bc = Math.min(d.reusable, p.believed[d.chosen]! * bt);
      if (bh <= bc) {
        if (bc > d.present) b[LABELS[4]].add(placed);
        else {
          const past = Math.max(0, d.best - Math.max(d.window, d.present, hit));
          b[LABELS[6]].add(Math.min(placed, past));
          b[LABELS[5]].add(placed - Math.min(placed, past));
        }
        return;
      }
      const why = p.shut[d.holder]!;
      if (d.best > d.window && bh >= d.window) b[LABELS[15]].add(placed);
      const h = d.holder;
      const c = d.chosen;
      shown.push({
        tokens: placed,
        line:
          `#${i} t=${(w.requests[i]!.arrivalMs / 1000).toFixed(1)}s prompt ${w.requests[i]!.promptTokens} lost ${placed} ` +
          `${why === WORK_BOUND ? "work-bound" : why === SHARED_CAP ? "shared-cap" : "cost"} | holder b${h} present ${d.best} believed ${bh} cost ${p.costs[h]!.toFixed(0)} wait ${p.wait[h]!.toFixed(0)} held ${p.held[h]!.toFixed(0)} | ` +
          `chosen b${c} present ${d.present} believed ${bc} cost ${p.costs[c]!.toFixed(0)} wait ${p.wait[c]!.toFixed(0)} held ${p.held[c]!.toFixed(0)} | fleet work ${p.fleetWork.toFixed(0)}`,
      });
      if (why === WORK_BOUND) b[LABELS[7]].add(placed);
      else if (why === SHARED_CAP) b[LABELS[8]].add(placed);
      else {
        const delta = p.costs[d.holder]! - p.costs[d.chosen]!;
        costGaps.push({ ms: delta, tokens: placed });
        if (delta > 50) {
          queues.n++;
          queues.tokens += placed;
          queues.predictedHolder += placed * p.wait[d.holder]!;
          queues.predictedChosen += placed * p.wait[d.chosen]!;
          queues.engineHolder += placed * d.backlog[d.holder]!;
          queues.engineChosen += placed * d.backlog[d.chosen]!;
        }
        if (delta <= inside.tolerance) b[LABELS[9]].add(placed);
        else if (delta <= 10) b[LABELS[10]].add(placed);
        else if (delta <= 50) b[LABELS[11]].add(placed);
        else if (delta <= 200) b[LABELS[12]].add(placed);
        else if (delta <= 1000) b[LABELS[13]].add(placed);
        else b[LABELS[14]].add(placed);
      }
    },
  },
);

const oracle = oracleHitRate(
  w.requests.map((r, i) => ({ blocks: w.promptBlocks[i]!, promptTokens: r.promptTokens })),
  Math.floor((fleet.backends * fleet.kvCacheTokens) / bt),
  bt,
);
const k = (x: number) => `${(x / 1000).toFixed(0)}k`;
const ofPrompt = (x: number) => `${((100 * x) / sumPrompt).toFixed(2)}`;
const ofOracle = (x: number) => `${((100 * x) / oracle.cachedTokens).toFixed(1)}`;
const out: string[] = [];
out.push(
  `# Hit breakdown: ${spec}, ${backends} backends, load ${load}, ${set} seed ${seed}, ${preset}`,
  "",
  `Command: \`${process.env.MOONCAKE_TRACE && spec === "mooncake" ? "MOONCAKE_TRACE=/work/shared/traces/mooncake_conversation.jsonl " : ""}${process.env.REQUESTS ? `REQUESTS=${process.env.REQUESTS} ` : ""}npx tsx bench/results/hit-gaps/breakdown.ts ${process.argv.slice(2).join(" ")}\``,
  "",
  `Run: ${n} requests, blocks of ${bt}; hit rate ${(100 * res.hitRate).toFixed(2)}%, TTFT p99 ${res.ttftP99Ms.toFixed(1)} ms, maxLoadRatio ${res.maxLoadRatio.toFixed(2)}; ` +
    `pooled oracle ${(100 * oracle.hitRate).toFixed(2)}% → ${((100 * res.hitRate) / oracle.hitRate).toFixed(1)}% of it.`,
  "",
  "Points of hit are % of prompt tokens; \"of the oracle's gap\" is the share of (oracle − run) cached tokens.",
  "",
  "| quantity | tokens | points of hit | of the oracle's gap |",
  "| --- | --- | --- | --- |",
  `| pooled oracle's hit | ${k(oracle.cachedTokens)} | ${ofPrompt(oracle.cachedTokens)} | |`,
  `| the run's hit | ${k(sumHit)} | ${ofPrompt(sumHit)} | |`,
  `| gap to the oracle | ${k(oracle.cachedTokens - sumHit)} | ${ofPrompt(oracle.cachedTokens - sumHit)} | 100% |`,
  `| best engine's holding at the decision, Σ best | ${k(sumBest)} | ${ofPrompt(sumBest)} | |`,
  `| oracle − Σ best: no engine held it at the decision | ${k(oracle.cachedTokens - sumBest)} | ${ofPrompt(oracle.cachedTokens - sumBest)} | ${pctOfGap(oracle.cachedTokens - sumBest)} |`,
  `| hit beyond the holder's (computed after the decision) | ${k(gained)} | ${ofPrompt(gained)} | ${pctOfGap(-gained)} |`,
);
function pctOfGap(x: number): string {
  const gap = oracle.cachedTokens - sumHit;
  return gap > 0 ? `${((100 * x) / gap).toFixed(1)}%` : "-";
}
out.push(
  "",
  `Fleet KV, sampled every ${SAMPLE_EVERY} decisions past the first quarter (${kvSamples.n} samples): ${((100 * kvSamples.keyed) / kvSamples.blocks).toFixed(1)}% of the blocks hold a reusable prompt block; ` +
    `${((100 * (kvSamples.keyed - kvSamples.distinct)) / kvSamples.blocks).toFixed(1)}% of the blocks are a second or later copy of a key another engine holds ` +
    `(the pooled oracle holds each key once, prompt blocks only).`,
);
{
  // The same pooled oracle given only the share of the fleet's blocks that held reusable prompt blocks on
  // average: what the engines' other contents (answers, partial blocks, blocks still filling or free)
  // leave a perfect router, by this one measure.
  const keyedShare = kvSamples.blocks > 0 ? kvSamples.keyed / kvSamples.blocks : 1;
  const shrunk = oracleHitRate(
    w.requests.map((r, i) => ({ blocks: w.promptBlocks[i]!, promptTokens: r.promptTokens })),
    Math.floor((keyedShare * fleet.backends * fleet.kvCacheTokens) / bt),
    bt,
  );
  out.push(
    "",
    `The pooled oracle with ${(100 * keyedShare).toFixed(1)}% of the fleet's capacity (the keyed share above): hit ${(100 * shrunk.hitRate).toFixed(2)}%; the run has ${((100 * res.hitRate) / shrunk.hitRate).toFixed(1)}% of it.`,
  );
}
out.push(
  "",
  "Lost = best − hit, per request, split exactly (requests with a loss of that kind, tokens):",
  "",
  "| why | requests | tokens | points of hit | of the oracle's gap |",
  "| --- | --- | --- | --- | --- |",
);
const row = (l: (typeof LABELS)[number]) => {
  const x = b[l];
  out.push(`| ${l} | ${x.requests} | ${k(x.tokens)} | ${ofPrompt(x.tokens)} | ${pctOfGap(x.tokens)} |`);
};
for (const l of LABELS.slice(0, 15)) row(l);
const lost = b[LABELS[0]].tokens + b[LABELS[3]].tokens;
out.push(`| **lost, total** | | ${k(lost)} | ${ofPrompt(lost)} | ${pctOfGap(lost)} |`);
row(LABELS[15]);
if (costGaps.length > 0) {
  costGaps.sort((x, y) => x.ms - y.ms);
  const total = costGaps.reduce((a, g) => a + g.tokens, 0);
  const q = (f: number) => {
    let acc = 0;
    for (const g of costGaps) {
      acc += g.tokens;
      if (acc >= f * total) return g.ms.toFixed(1);
    }
    return costGaps[costGaps.length - 1]!.ms.toFixed(1);
  };
  out.push(
    "",
    `Cost choices (the index knew, the holder was a candidate): Δ cost_h − cost_c, token-weighted p10 ${q(0.1)} / p50 ${q(0.5)} / p90 ${q(0.9)} ms over ${costGaps.length} requests.`,
  );
}
if (queues.tokens > 0) {
  const m = (x: number) => (x / queues.tokens).toFixed(0);
  out.push(
    "",
    `Cost choices by more than 50 ms (${queues.n} requests), token-weighted means: the cost model's queue wait at the holder ${m(queues.predictedHolder)} ms, at the chosen ${m(queues.predictedChosen)} ms; ` +
      `the engines' own prefill backlog (uncached tokens queued at the preset's rate, a lower bound) at the holder ${m(queues.engineHolder)} ms, at the chosen ${m(queues.engineChosen)} ms.`,
  );
}
out.push(
  "",
  `Prompts the key window cut (${cut.requests}): the policy expected ${k(cut.expected)} tokens cached on the chosen engine, which held ${k(cut.present)} at the decision; ` +
    `over by ${k(cut.over)}, under by ${k(cut.under)} (summed per request).`,
);
const show = Number(process.env.SHOW ?? 0);
if (show > 0) {
  shown.sort((x, y) => y.tokens - x.tokens);
  out.push("", `The ${show} largest placement losses (the index knew the holder; cost, wait: the cost model's ms; held: its work ledger, tokens):`, "");
  for (const s of shown.slice(0, show)) out.push(`    ${s.line}`);
}
console.log(out.join("\n"));
