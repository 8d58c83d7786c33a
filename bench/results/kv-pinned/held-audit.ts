// What prefix_aware believes its requests in flight hold in each engine's KV against what the engine holds,
// at every decision, on the chosen backend and over the fleet: the old ledger (uncached prompt + expected
// output, PrefillCostModel.heldTokens) and the memory the cost model now charges (pinned prompts, shared
// blocks once, + expected outputs, PrefillCostModel.memoryHeld with FleetView.pinnedTokens), each ÷ the
// engine's blocks in use (running and admitted requests: prompt + output reserved at admission,
// sim/model/scheduler.ts) and how often each crosses the capacity while the engine has room.
// The memory row needs kv-pinned.patch applied (memoryHeld and FleetView.pinnedTokens, not kept on main);
// without it the audit prints the engine and the ledger only.
//   npx tsx bench/results/kv-pinned/held-audit.ts WORKLOAD BACKENDS LOAD SET SEED PRESET
//   (REQUESTS=N as bench/sim-all.sh; MOONCAKE_TRACE for mooncake). An audit only: engine internals via casts.
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { simulatePolicy } from "../../../sim/simulator";
import { type EngineInside, loadAuditRunFromArgv } from "../audit-run";

const { spec, backends, load, set, seed, preset, w, fleet } = await loadAuditRunFromArgv({
  spec: "multi-turn",
  backends: 8,
  load: 40,
  set: "tuning",
  seed: 2,
  preset: "qwen3-30b-a3b-h100-vllm",
});
const bt = w.blockTokens;

const policy = new PrefixAwarePolicy();
/** The patch's accounting, when applied: the memory held as the cost model charges it. */
const withPatch = policy.model as unknown as { memoryHeld?: (i: number, pinned?: number) => number };
type PinnedView = { pinnedTokens?: (i: number) => number };
const pending: { ledger: number[]; memory: number[]; cap: number } = { ledger: [], memory: [], cap: 0 };
const pick = policy.pick.bind(policy);
policy.pick = (req, f, ctx) => {
  pending.ledger = f.backends.map((_, j) => policy.model.heldTokens(j));
  const pinned = (f as unknown as PinnedView).pinnedTokens?.bind(f);
  pending.memory = f.backends.map((_, j) => withPatch.memoryHeld?.(j, pinned?.(j)) ?? Number.NaN);
  pending.cap = f.backends[0]!.kvCacheTokens;
  return pick(req, f, ctx);
};
const rows: { ledger: number; memory: number; engine: number; cap: number }[] = [];
const res = simulatePolicy(w, fleet, "prefix_aware", (specs) => new Router(specs, { policy, blockTokens: bt }), GATEWAY_VIEW, undefined, {
  routed(i, _b, _d, engines) {
    const now = w.requests[i]!.arrivalMs;
    engines.forEach((e, j) => {
      e.metrics(now);
      const p = (e as unknown as EngineInside).pool;
      rows.push({ ledger: pending.ledger[j]!, memory: pending.memory[j]!, engine: (p.numBlocks - p.numFree) * bt, cap: pending.cap });
    });
  },
});
const pct = (xs: number[], p: number) => {
  const a = [...xs].sort((x, y) => x - y);
  return a[Math.min(a.length - 1, Math.floor((p / 100) * a.length))]!;
};
const f = (x: number) => x.toFixed(2);
console.log(`${spec} ${backends}b load ${load} ${set} seed ${seed} ${preset}: p99 ${res.ttftP99Ms.toFixed(1)} ms, hit ${(res.hitRate * 100).toFixed(2)}%`);
console.log(`capacity ${rows[0]?.cap} tokens per engine; ${rows.length} (decision, backend) samples`);
const rowsShown = withPatch.memoryHeld === undefined ? (["engine", "ledger"] as const) : (["engine", "ledger", "memory"] as const);
for (const k of rowsShown) {
  const xs = rows.map((r) => r[k] / r.cap);
  console.log(`${k.padEnd(7)} ÷ capacity: p10 ${f(pct(xs, 10))} p50 ${f(pct(xs, 50))} p90 ${f(pct(xs, 90))} p99 ${f(pct(xs, 99))}; ≥ 1 on ${(100 * xs.filter((x) => x >= 1).length / xs.length).toFixed(1)}%`);
}
const busy = rows.filter((r) => r.engine > 0.05 * r.cap);
for (const k of rowsShown.filter((x) => x !== "engine")) {
  const xs = busy.map((r) => r[k] / r.engine);
  console.log(`${k.padEnd(7)} ÷ engine in use (engine > 5% full): p10 ${f(pct(xs, 10))} p50 ${f(pct(xs, 50))} p90 ${f(pct(xs, 90))}`);
}
