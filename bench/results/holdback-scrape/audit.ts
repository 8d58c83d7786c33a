// How the admission view's two answers to "would the request wait for KV memory here?" differ on one run
// of prefix_aware with the scrape on: the ledger's (cost-model.ts memoryWaitForMs) and the one prefix_aware
// used (its memoryWaits). Run it on a checkout of either form (commit 18c4d34, the engine view, or 5f60ac6,
// the either view; or holdback with engine-view.patch / either-view.patch applied): on src as merged the
// two are the same by construction. Per candidate backend of each decision (within its bounds): whether a
// fresh reading was there, and where the two disagree, which way, with the prompt's length. An audit only:
// it reads the policy's per-decision arrays after each pick (the ledger has not moved since: onRouted comes
// after), nothing here changes routing.
//   MOONCAKE_TRACE=… npx tsx bench/results/holdback-scrape/audit.ts mooncake 8 2 tuning 1 qwen3-30b-a3b-h100-vllm
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import type { EngineSignals } from "../../../src/routing/types";
import { routerFactory, viewOf } from "../../../sim/policies";
import { simulatePolicy } from "../../../sim/simulator";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING, quantileOf } from "../audit-run";

const SCRAPE_MS = 1000;
const { w, fleet } = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
type Inside = {
  pick: (...a: unknown[]) => { index: number };
  costs: Float64Array;
  work: Float64Array;
  memoryWaits: Float64Array;
  readings: (EngineSignals | undefined)[];
  model: { memoryWaitForMs(i: number, need: number, now: number): number };
  foreign: { maxAgeMs: number };
};
const proto = PrefixAwarePolicy.prototype as unknown as Inside;
let decisions = 0;
let candidates = 0;
let fresh = 0;
let engineShortLedgerFits = 0;
let engineFitsLedgerShort = 0;
let decisionsDiffer = 0;
const shortSizes: number[] = [];
const fitsSizes: number[] = [];
const pick = proto.pick;
proto.pick = function (this: Inside, ...a: unknown[]) {
  const out = pick.apply(this, a);
  const now = (a[2] as { now: number }).now;
  const prompt = (a[0] as { promptTokens: number }).promptTokens;
  decisions++;
  let differ = false;
  // Candidates: a finite cost, or held back (a positive answer; those out of bounds get 0).
  let ledgerFitsSomewhere = false;
  let engineFitsSomewhere = false;
  const ledger: boolean[] = [];
  const engine: boolean[] = [];
  for (let i = 0; i < this.costs.length; i++) {
    const isCandidate = this.costs[i] !== Number.POSITIVE_INFINITY || this.memoryWaits[i]! > 0;
    ledger.push(false);
    engine.push(false);
    if (!isCandidate) continue;
    candidates++;
    const r = this.readings[i];
    const usable = r !== undefined && r.ownInflight !== undefined && now - r.sampledAt <= this.foreign.maxAgeMs;
    const l = this.model.memoryWaitForMs(i, this.work[i]!, now) > 0;
    const e = this.memoryWaits[i]! > 0;
    ledger[i] = l;
    engine[i] = e;
    if (!l) ledgerFitsSomewhere = true;
    if (!e) engineFitsSomewhere = true;
    if (!usable) continue;
    fresh++;
    if (e && !l) {
      engineShortLedgerFits++;
      shortSizes.push(prompt);
    }
    if (!e && l) {
      engineFitsLedgerShort++;
      fitsSizes.push(prompt);
    }
  }
  // Would the held-back set differ? (the rule holds back the "wait" ones when some candidate fits)
  for (let i = 0; i < ledger.length; i++) {
    const heldL = ledgerFitsSomewhere && ledger[i];
    const heldE = engineFitsSomewhere && engine[i];
    if (heldL !== heldE) differ = true;
  }
  if (differ) decisionsDiffer++;
  return out;
};
const r = simulatePolicy(
  w,
  { ...fleet, scrapeMs: SCRAPE_MS },
  "prefix_aware",
  routerFactory("prefix_aware", w.blockTokens),
  viewOf("prefix_aware"),
);
const q = quantileOf;
const pct = (x: number, of: number) => `${((100 * x) / of).toFixed(2)}%`;
console.log(`prefix_aware, scrape ${SCRAPE_MS} ms: p50 ${r.ttftP50Ms.toFixed(0)} ms, p99 ${r.ttftP99Ms.toFixed(0)} ms`);
console.log(`decisions ${decisions}; candidates ${candidates}, with a fresh reading ${fresh} (${pct(fresh, candidates)})`);
console.log(
  `engine says wait, ledger says fits: ${engineShortLedgerFits} candidates (prompts p10 ${q(shortSizes, 0.1)} median ${q(shortSizes, 0.5)} p90 ${q(shortSizes, 0.9)})`,
);
console.log(
  `engine says fits, ledger says wait: ${engineFitsLedgerShort} candidates (prompts p10 ${q(fitsSizes, 0.1)} median ${q(fitsSizes, 0.5)} p90 ${q(fitsSizes, 0.9)})`,
);
console.log(`decisions whose held-back set differs from the ledger's: ${decisionsDiffer} (${pct(decisionsDiffer, decisions)})`);
