// How often prefix_aware's admission view holds a backend back, and whether the engine (vLLM V1's allocation,
// the simulator's default) would in fact have admitted the request there at once. One Mooncake run of the
// tuning half; the counts are by decision.
//   MOONCAKE_TRACE=... npx tsx bench/results/admit-isl/holdback-audit.ts mooncake BACKENDS SPEED tuning 1 PRESET
// Reads the cost model's memoryWaitForMs calls (a prototype wrapper) and the engines at each decision through
// casts: an audit only, nothing here is used by the router or the simulator.
import { routerFactory } from "../../../sim/policies";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { simulatePolicy } from "../../../sim/simulator";
import { PrefillCostModel } from "../../../src/routing/cost-model";
import { type EngineInside, loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING } from "../audit-run";

const run = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const { w, fleet } = run;
const bt = w.blockTokens;

/** The memory waits asked during the decision in progress: backend → [first ask (the ledger's), last ask (with margin)]. */
let asked = new Map<number, [number, number]>();
const original = PrefillCostModel.prototype.memoryWaitForMs;
PrefillCostModel.prototype.memoryWaitForMs = function (i: number, need: number, now: number): number {
  const wait = original.call(this, i, need, now);
  const prev = asked.get(i);
  asked.set(i, prev === undefined ? [wait, wait] : [prev[0], wait]);
  return wait;
};

let decisions = 0;
let anyLedgerWait = 0; // some candidate had a ledger memory wait > 0
let fired = 0; // the hold back set some candidate aside (one fits now, another does not)
let heldTotal = 0;
let heldEngineAdmits = 0; // held-back backends whose engine would have admitted the request's input at once
let heldEngineEmptyQueue = 0; // ... and had nobody waiting
let noneFits = 0; // every candidate waits by the ledger: nothing held, the cost decides
let chosenWaits = 0; // the chosen backend had a ledger memory wait > 0
let chosenEngineBlocked = 0; // the chosen engine could not admit the request's input at once (vLLM V1's test)
let heldOnChosenEngineBlocked = 0;
let heldByMarginOnly = 0; // held back though the ledger alone admits it now: the learned margin's doing

simulatePolicy(w, fleet, "prefix_aware", routerFactory("prefix_aware", bt), GATEWAY_VIEW, undefined, {
  routed(i, b, _d, engines) {
    const now = w.requests[i]!.arrivalMs;
    decisions++;
    const waits = asked;
    asked = new Map();
    let fits = false;
    let waitsSome = false;
    for (const [, [ledger, admit]] of waits) {
      if (admit > 0) waitsSome = true;
      else fits = true;
      if (ledger > 0) waitsSome = true;
    }
    if ([...waits.values()].some(([l]) => l > 0)) anyLedgerWait++;
    const admitsAtOnce = (j: number): { admits: boolean; empty: boolean } => {
      const e = engines[j]!;
      e.metrics(now);
      const x = e as unknown as EngineInside;
      const cached = x.pool.longestPrefix(w.promptBlocks[i]!);
      const need = Math.ceil(w.requests[i]!.promptTokens / bt) - cached;
      const empty = x.scheduler.waiting.length - x.scheduler.waitHead === 0;
      return { admits: need <= x.pool.numFree, empty };
    };
    if (fits && waitsSome) {
      let held = 0;
      for (const [j, [ledger, admit]] of waits) {
        if (!(admit > 0)) continue;
        held++;
        if (!(ledger > 0)) heldByMarginOnly++;
        const a = admitsAtOnce(j);
        if (a.admits) heldEngineAdmits++;
        if (a.admits && a.empty) heldEngineEmptyQueue++;
      }
      if (held > 0) {
        fired++;
        heldTotal += held;
        const c = admitsAtOnce(b);
        if (!(c.admits && c.empty)) heldOnChosenEngineBlocked++;
      }
    } else if (!fits && waits.size > 0) noneFits++;
    if ((waits.get(b)?.[0] ?? 0) > 0) chosenWaits++;
    const c = admitsAtOnce(b);
    if (!(c.admits && c.empty)) chosenEngineBlocked++;
  },
});

const pct = (x: number, of: number) => `${x} (${of === 0 ? "0" : ((100 * x) / of).toFixed(2)}%)`;
console.log(`run: ${run.spec} ${run.backends}b x${run.load} ${run.set} seed ${run.seed} ${run.preset}`);
console.log(`decisions: ${decisions}`);
console.log(`a candidate with a ledger memory wait > 0: ${pct(anyLedgerWait, decisions)}`);
console.log(`hold back fired (some candidate fits now, another not): ${pct(fired, decisions)}`);
console.log(`  backends held back: ${heldTotal}; of them, the engine would admit the input at once: ${pct(heldEngineAdmits, heldTotal)}; and its queue empty: ${pct(heldEngineEmptyQueue, heldTotal)}`);
console.log(`  held back by the learned margin alone (the ledger admits it now): ${pct(heldByMarginOnly, heldTotal)}`);
console.log(`  decisions that fired where the chosen engine had a queue or no room for the input: ${pct(heldOnChosenEngineBlocked, fired)}`);
console.log(`no candidate fits by the ledger (nothing held): ${pct(noneFits, decisions)}`);
console.log(`chosen backend with a ledger memory wait > 0: ${pct(chosenWaits, decisions)}`);
console.log(`chosen engine with a queue or no room for the input at the decision: ${pct(chosenEngineBlocked, decisions)}`);
