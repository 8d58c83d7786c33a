// What prefix_aware's memory wait believes a backend holds, against the engine model's blocks in use, under
// vLLM V1's step-by-step allocation (the default since kv-default), with two corrections a gateway could make
// from what it knows, measured only (no decision changes; the p99 printed equals the report's):
//   A (main): Σ over our in-flight requests of heldNow (cost-model.ts): input (uncached prompt + cached past
//     the window) + the max_tokens hint × the share of one learned decode time elapsed since the predicted
//     prefill end;
//   B: A + the cached history they pin, each block once: the affinity index's pinned entries (distinct keyed
//     blocks of our requests in flight, lru-block-set.ts) less the keyed blocks they added (counted in A);
//   D: the count the policy's memory wait makes (on a branch whose slots carry answerTokens: the pool's
//     learned mean answer capped by the hint; on main it equals B);
//   C: B with each answer at min(hint, mean answer) (mean alone without a hint) instead of the hint. The
//     audit takes the run's mean true answer for the pool's mean (a gateway would learn it from
//     usage.completion_tokens).
// E = engine blocks in use (U) + what its waiting queue takes at admission. Per (decision, backend), past the
// first tenth. Then the slowest 1%: the chosen backend at their own decision.
//   REQUESTS=10000 npx tsx bench/results/mt-moe/memory-audit.ts multi-turn 8 45 tuning 2 qwen3-30b-a3b-h100-vllm
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import type { PrefillSlot } from "../../../src/routing/cost-model";
import { Router } from "../../../src/routing/router";
import type { FleetView } from "../../../src/routing/types";
import type { EngineReq as EngReq } from "../../../sim/model/scheduler";
import { viewOf } from "../../../sim/policies";
import { simulatePolicy } from "../../../sim/simulator";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING, withTtft } from "../audit-run";

const { spec, backends, load, set, seed, preset, w, fleet } = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const bt = w.blockTokens;
const n = w.requests.length;
const cap = fleet.kvCacheTokens;
const meanAnswer = w.requests.reduce((a, r) => a + r.outputTokens, 0) / n;

interface Eng {
  metrics(now: number): unknown;
  pool: { numFree: number; numBlocks: number; longestPrefix(keys: readonly number[]): number };
  byId: Map<string, EngReq>;
}
interface Inside {
  states: { decodeMs: number; residenceMs: number }[];
}

const policy = new PrefixAwarePolicy();
let fleetView: FleetView | undefined;
let pendingNew = 0;
const newKeyed = new Map<PrefillSlot, number>();
const pick = policy.pick.bind(policy);
policy.pick = (req, f, ctx) => {
  fleetView = f;
  const m = req.blocks.length > 0 ? f.matchedBlocks(req.blocks) : undefined;
  const r = pick(req, f, ctx);
  pendingNew = (req.blocks.length - (m ? m[r.index]! : 0)) * bt;
  return r;
};
const routed = policy.model.routed.bind(policy.model);
policy.model.routed = (...a: Parameters<typeof routed>) => {
  const slot = routed(...a);
  newKeyed.set(slot, pendingNew);
  return slot;
};

function pinnedTokens(j: number): number {
  const f = fleetView as unknown as { affinity: { blocks: { pinned: number } }[]; indexStride: number };
  return f.affinity[j]!.blocks.pinned * bt * f.indexStride;
}

interface S {
  E: number;
  A: number;
  B: number;
  C: number;
  D: number;
  hist: number;
}
const samples: S[] = [];
const atDecision: (S | undefined)[] = new Array(n);

function measure(e: Eng, j: number, now: number): S {
  e.metrics(now);
  const U = (e.pool.numBlocks - e.pool.numFree) * bt;
  let queued = 0;
  for (const r of e.byId.values()) {
    if (r.phase !== "waiting") continue;
    queued += (Math.ceil(r.promptTokens / bt) - e.pool.longestPrefix(r.blocks)) * bt;
  }
  const st = (policy.model as unknown as Inside).states[j]!;
  const decode = st.decodeMs > 0 ? st.decodeMs : st.residenceMs;
  let A = 0;
  let Cout = 0;
  let Dout = 0;
  let added = 0;
  for (const slot of policy.model.openSlots(j)) {
    const done = decode > 0 ? Math.min(1, Math.max(0, (now - slot.end) / decode)) : 1;
    const input = slot.kvTokens - slot.outputTokens;
    A += input + slot.outputTokens * done;
    const ans = slot.outputTokens > 0 ? Math.min(slot.outputTokens, meanAnswer) : meanAnswer;
    Cout += input + ans * done;
    // D: the count the branch's memory wait makes (its slots' answerTokens, the pool's learned mean).
    const own = (slot as { answerTokens?: number }).answerTokens;
    Dout += input + (own ?? slot.outputTokens) * done;
    added += newKeyed.get(slot) ?? 0;
  }
  const hist = Math.max(0, pinnedTokens(j) - added);
  return { E: U + queued, A, B: A + hist, C: Cout + hist, D: Dout + hist, hist };
}

const ttft = new Float64Array(n).fill(Number.NaN);
const res = simulatePolicy(
  w,
  fleet,
  "prefix_aware",
  withTtft((specs) => new Router(specs, { policy, blockTokens: bt }), ttft),
  viewOf("prefix_aware"),
  undefined,
  {
    routed(i, chosen, _d, engines) {
      const now = w.requests[i]!.arrivalMs;
      const es = engines as unknown as Eng[];
      for (let j = 0; j < es.length; j++) {
        const s = measure(es[j]!, j, now);
        if (i >= n / 10) samples.push(s);
        if (j === chosen) atDecision[i] = s;
      }
    },
  },
);

const qs = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
const k0 = (x: number) => `${(x / 1000).toFixed(1)}k`;
const ratio = (ss: S[], key: "A" | "B" | "C" | "D") => {
  const r = ss.filter((s) => s.E > 0).map((s) => s[key] / s.E);
  return `${qs(r, 0.1).toFixed(2)} / ${qs(r, 0.5).toFixed(2)} / ${qs(r, 0.9).toFixed(2)}`;
};
const row = (label: string, ss: S[]) =>
  console.log(
    `| ${label} | ${ss.length} | ${k0(qs(ss.map((s) => s.E), 0.5))} | ${k0(qs(ss.map((s) => s.hist), 0.5))} | ${ratio(ss, "A")} | ${ratio(ss, "B")} | ${ratio(ss, "C")} | ${ratio(ss, "D")} | ${ss.filter((s) => s.A < cap && s.E >= cap).length} / ${ss.filter((s) => s.B < cap && s.E >= cap).length} / ${ss.filter((s) => s.C < cap && s.E >= cap).length} / ${ss.filter((s) => s.D < cap && s.E >= cap).length} |`,
  );

const order = Array.from(ttft).filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
const p99 = order[Math.floor(0.99 * order.length)]!;
console.log(`run: ${spec} ${backends} backends, load ${load}, ${set} seed ${seed}, ${preset}; capacity ${cap} tokens per engine; mean true answer ${meanAnswer.toFixed(0)} tokens`);
console.log(`prefix_aware: p50 ${res.ttftP50Ms.toFixed(0)} ms, p99 ${res.ttftP99Ms.toFixed(0)} ms, hit ${(100 * res.hitRate).toFixed(1)}%`);
console.log("");
console.log("Memory held by count A (main), B (+ pinned history once), C (B, answers at min(hint, mean)) against the engine's E; ratios p10 / median / p90");
console.log("| samples | n | engine E (median) | pinned history (median) | A/E | B/E | C/E | D/E | count < capacity while E ≥ capacity: A / B / C / D |");
console.log("|---|---|---|---|---|---|---|---|---|");
row("all (past the first tenth)", samples);
row("engine E ≥ 90% of capacity", samples.filter((s) => s.E >= 0.9 * cap));
row("engine E ≥ capacity", samples.filter((s) => s.E >= cap));
const tail: number[] = [];
for (let i = 0; i < n; i++) if (ttft[i]! >= p99) tail.push(i);
row(`slowest 1% (TTFT ≥ ${p99.toFixed(0)} ms): chosen backend`, tail.map((i) => atDecision[i]!).filter((s) => s !== undefined));
