// Why the learned margin holds back backends the engine would admit (admit-isl's finding). One Mooncake run
// of the tuning half; at every backend the admission view holds back by the margin alone (the ledger alone
// admits the request now), it sets side by side, in tokens:
//   M      the margin (estimate-margin.ts marginTokens),
//   E      the Worker's true error on what the margin covers: Σ (true prompt − Worker's count) over our
//          requests in flight there that ran past the key window, plus the request's own,
//   slack  the ledger's free memory short of the engine's: engine free (numFree, cached-unreferenced included)
//          − (capacity − the ledger's held now, Σ heldNow), i.e. how much the ledger already over-counts,
//   Q      the prompt tokens queued in the engine (the ledger holds them; the engine has not allocated them).
//   MOONCAKE_TRACE=... npx tsx bench/results/margin-inc/margin-audit.ts mooncake BACKENDS SPEED tuning 1 PRESET
// Reads the router's margin, the cost model and the engines through casts and prototype wrappers: an audit
// only, nothing here is used by the router or the simulator.
import { routerFactory } from "../../../sim/policies";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { simulatePolicy } from "../../../sim/simulator";
import { PrefillCostModel } from "../../../src/routing/cost-model";
import { EstimateMargin } from "../../../src/routing/estimate-margin";
import { type EngineInside, loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING, quantileOf } from "../audit-run";

const run = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const { w, fleet } = run;
const bt = w.blockTokens;
const window = (i: number) => w.gatewayBlocks[i]!.length * bt;
/** The Worker's count past the window of request i (0 when its prompt fits in the window). */
const tailOf = (i: number) => Math.max(0, w.gatewayPromptTokens[i]! - window(i));
const errOf = (i: number) => w.requests[i]!.promptTokens - w.gatewayPromptTokens[i]!;

/** The memory waits of the decision in progress: backend → [ledger's, with margin]. */
let asked = new Map<number, [number, number]>();
let model: PrefillCostModel | undefined;
const original = PrefillCostModel.prototype.memoryWaitForMs;
PrefillCostModel.prototype.memoryWaitForMs = function (i: number, need: number, now: number): number {
  model = this;
  const wait = original.call(this, i, need, now);
  const prev = asked.get(i);
  asked.set(i, prev === undefined ? [wait, wait] : [prev[0], wait]);
  return wait;
};
let margins = new Map<number, number>();
const originalMargin = EstimateMargin.prototype.marginTokens;
EstimateMargin.prototype.marginTokens = function (i: number, tail: number): number {
  const m = originalMargin.call(this, i, tail);
  margins.set(i, m);
  return m;
};

/** Our requests in flight per backend. */
const inflight = Array.from({ length: fleet.backends }, () => new Set<number>());
interface Row {
  m: number;
  e: number;
  slack: number;
  q: number;
  tails: number;
  /** Engine blocks held by its running requests, summed per request (a block two of them share counts twice), tokens. */
  a: number;
  /** Engine blocks in use (numBlocks − numFree), tokens. */
  u: number;
  /** The ledger's held now (Σ heldNow) and its capacity, tokens. */
  l: number;
  cap: number;
  /** The ledger's held output (Σ expected output × decoded share). */
  lo: number;
  /** The engine's held output: Σ over its running requests of (blocks held − prompt blocks), tokens. */
  eo: number;
  /** Our requests in flight there that the engine holds neither running nor waiting, and their prompts (the Worker's count). */
  gone: number;
  goneTokens: number;
  /** The input its running requests still prefill and have no blocks for yet (a chunked prefill takes them chunk by chunk), tokens. */
  p: number;
}
const rows: Row[] = [];
let decisions = 0;
/** Every decision, every backend with a margin > 0: the margin against the true error it covers. */
let marginSamples = 0;
let marginCovers = 0;
const allRatio: number[] = [];

simulatePolicy(w, fleet, "prefix_aware", routerFactory("prefix_aware", bt), GATEWAY_VIEW, undefined, {
  routed(i, b, _d, engines) {
    const now = w.requests[i]!.arrivalMs;
    decisions++;
    const waits = asked;
    const ms = margins;
    asked = new Map();
    margins = new Map();
    const trueErr = (j: number) => {
      let e = tailOf(i) > 0 ? errOf(i) : 0;
      let tails = 0;
      for (const r of inflight[j]!)
        if (tailOf(r) > 0) {
          e += errOf(r);
          tails++;
        }
      return { e, tails };
    };
    for (const [j, m] of ms) {
      if (!(m > 0)) continue;
      marginSamples++;
      const { e } = trueErr(j);
      if (e <= m) marginCovers++;
      allRatio.push(e / m);
    }
    let fits = false;
    let waitsSome = false;
    for (const [, [ledger, admit]] of waits) {
      if (admit > 0 || ledger > 0) waitsSome = true;
      if (!(admit > 0)) fits = true;
    }
    if (fits && waitsSome && model !== undefined) {
      const cm = model as unknown as {
        states: { open: { kvTokens: number; outputTokens: number; end: number }[]; capacity: number }[];
        expectedDecodeMs(s: unknown): number;
      };
      for (const [j, [ledger, admit]] of waits) {
        if (!(admit > 0) || ledger > 0) continue;
        const s = cm.states[j]!;
        const decode = cm.expectedDecodeMs(s);
        let held = 0;
        let lo = 0;
        for (const slot of s.open) {
          const decoded = decode > 0 ? Math.min(1, Math.max(0, (now - slot.end) / decode)) : 1;
          held += slot.kvTokens - slot.outputTokens * (1 - decoded);
          lo += slot.outputTokens * decoded;
        }
        const e = engines[j]!;
        e.metrics(now);
        const x = e as unknown as EngineInside;
        let q = 0;
        for (let k = x.scheduler.waitHead; k < x.scheduler.waiting.length; k++) q += x.scheduler.waiting[k]!.promptTokens;
        const slack = x.pool.numFree * bt - (s.capacity - held);
        const t = trueErr(j);
        let a = 0;
        let eo = 0;
        const inEngine = new Set<string>();
        const sch = x.scheduler as unknown as {
          running: { id: string; held: number; promptTokens: number }[];
          waiting: { id: string }[];
        };
        let p = 0;
        for (const r of sch.running) {
          a += r.held * bt;
          p += Math.max(0, Math.ceil(r.promptTokens / bt) - r.held) * bt;
          eo += Math.max(0, r.held - Math.ceil(r.promptTokens / bt)) * bt;
          inEngine.add(r.id);
        }
        for (let k = x.scheduler.waitHead; k < sch.waiting.length; k++) inEngine.add(sch.waiting[k]!.id);
        let gone = 0;
        let goneTokens = 0;
        for (const r of inflight[j]!)
          if (!inEngine.has(String(r))) {
            gone++;
            goneTokens += w.gatewayPromptTokens[r]!;
          }
        const u = (x.pool.numBlocks - x.pool.numFree) * bt;
        rows.push({ m: ms.get(j) ?? 0, e: t.e, slack, q, tails: t.tails, a, u, l: held, cap: s.capacity, lo, eo, gone, goneTokens, p });
      }
    }
    inflight[b]!.add(i);
  },
  done(i, b) {
    inflight[b]!.delete(i);
  },
});

const q = (xs: number[]) =>
  [0.1, 0.25, 0.5, 0.75, 0.9].map((p) => Math.round(quantileOf(xs, p)).toLocaleString("en-US")).join(" / ");
const pct = (x: number, of: number) => `${x} of ${of} (${of === 0 ? "0" : ((100 * x) / of).toFixed(1)}%)`;
console.log(`run: ${run.spec} ${run.backends}b x${run.load} ${run.set} seed ${run.seed} ${run.preset}`);
console.log(`decisions: ${decisions}`);
console.log(`candidates with a margin > 0: ${marginSamples}; the true error there ≤ the margin: ${pct(marginCovers, marginSamples)}`);
console.log(`  true error / margin, quantiles 10/25/50/75/90%: ${[0.1, 0.25, 0.5, 0.75, 0.9].map((p) => quantileOf(allRatio, p).toFixed(2)).join(" / ")}`);
console.log(`backends held by the margin alone: ${rows.length}`);
console.log(`  M (margin) quantiles 10/25/50/75/90%:        ${q(rows.map((r) => r.m))}`);
console.log(`  E (true error covered):                      ${q(rows.map((r) => r.e))}`);
console.log(`  slack (engine free − ledger free):           ${q(rows.map((r) => r.slack))}`);
console.log(`  Q (prompt tokens queued in the engine):      ${q(rows.map((r) => r.q))}`);
console.log(`  capacity: ledger ${rows[0]?.cap} tokens; engine ${(run as unknown as { fleet: { kvCacheTokens: number } }).fleet.kvCacheTokens}`);
console.log(`  the slack split, L − U = Q + (A − U) + rest (L: ledger held, U: engine blocks in use, A: Σ per running request):`);
console.log(`    A − U (blocks shared by running requests, counted once by the engine): ${q(rows.map((r) => r.a - r.u))}`);
console.log(`    rest = L − Q − A (the ledger's own per-request over-count):          ${q(rows.map((r) => r.l - r.q - r.a))}`);
console.log(`    of rest, input still to prefill that the engine has no blocks for yet (P): ${q(rows.map((r) => r.p))}`);
console.log(`    rest − P:                                                             ${q(rows.map((r) => r.l - r.q - r.a - r.p))}`);
console.log(`    of rest, the ledger's held output (expected output × decoded share): ${q(rows.map((r) => r.lo))}`);
console.log(`    the engine's held output (running: blocks held − prompt blocks):      ${q(rows.map((r) => r.eo))}`);
console.log(`  our in-flight requests there the engine holds neither running nor waiting: ${q(rows.map((r) => r.gone))}; their prompts: ${q(rows.map((r) => r.goneTokens))}`);
console.log(`  in-flight requests past the window there:    ${q(rows.map((r) => r.tails))}`);
console.log(`  E ≤ 0 (the Worker over-counted what is there): ${pct(rows.filter((r) => r.e <= 0).length, rows.length)}`);
console.log(`  E > M (the margin too small):                 ${pct(rows.filter((r) => r.e > r.m).length, rows.length)}`);
console.log(`  slack ≥ M (the ledger already over-counts by the margin or more): ${pct(rows.filter((r) => r.slack >= r.m).length, rows.length)}`);
console.log(`  slack − Q ≥ M (… after the engine's queue takes its share):      ${pct(rows.filter((r) => r.slack - r.q >= r.m).length, rows.length)}`);
console.log(`  slack − Q − P ≥ M (… and after the running prefills take theirs):  ${pct(rows.filter((r) => r.slack - r.q - r.p >= r.m).length, rows.length)}`);
console.log(`  slack − Q − P ≥ 0 (the engine has room once the queue and the running prefills have theirs): ${pct(rows.filter((r) => r.slack - r.q - r.p >= 0).length, rows.length)}`);
console.log(`  slack ≥ E (the ledger's over-count already covers the true error): ${pct(rows.filter((r) => r.slack >= r.e).length, rows.length)}`);
