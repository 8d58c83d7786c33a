// Noise gauge for the eviction price: prefix_aware with the price on and off, each at tie tolerances
// 0.9 / 1 / 1.1 / 1.2 ms (a change of no meaning that shows how far a p99 moves by chance, as
// bench/results/tail-gaps/README.md's gauge), on one workload of the race.
//   npx tsx bench/results/evict-age/gauge.ts WORKLOAD BACKENDS LOAD SET SEED PRESET
//   e.g. REQUESTS=10000 npx tsx bench/results/evict-age/gauge.ts multi-turn 8 40 tuning 2 qwen3-30b-a3b-h100-vllm
//   LOAD is req/s, or the replay speed for mooncake (MOONCAKE_TRACE set); REQUESTS as bench/sim-all.sh.
// The price rows need the patch applied (`git apply bench/results/evict-age/evict-age.patch`, on c0eb96d):
// set PATCHED=1; without it only main's rows (price off) are printed.
// The workload is prepared as bench/results/tail-gaps/audit.ts prepares it; the off / 1 ms row must equal
// main's report of the same run (checked for the runs quoted in policy-work.md "Eviction age").
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import { loadSetData } from "../../../sim/eval-sets";
import { engineFlags } from "../../../sim/flags";
import { prepareWorkload } from "../../../sim/prepare";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { type FleetConfig, type RouterFactory, simulatePolicy } from "../../../sim/simulator";

const [spec = "multi-turn", backendsS = "8", loadS = "40", set = "tuning", seedS = "2", preset = "qwen3-30b-a3b-h100-vllm"] =
  process.argv.slice(2);
const isTrace = spec === "mooncake";
const seed = Number(seedS);
const data = await loadSetData(spec, {
  rate: isTrace ? 1 : Number(loadS),
  seed,
  speed: isTrace ? Number(loadS) : 1,
  ...(set === "none" ? {} : { set: set as "tuning" | "scoring" }),
  ...(process.env.REQUESTS !== undefined ? { requests: Number(process.env.REQUESTS) } : {}),
});
const w = prepareWorkload(data.workload, { prefixTokens: 32768, maxTokens: "clients", seed });
const fleet: FleetConfig = { backends: Number(backendsS), seed, ...engineFlags(preset, undefined) };
console.log(`${spec} ${backendsS}b load ${loadS} ${set} seed ${seed} ${preset}: ${w.requests.length} requests`);
// `evictionPrice` is an option of the patched policy only: passed untyped, so this compiles on main too.
const prices = process.env.PATCHED === "1" ? [false, true] : [false];
for (const evictionPrice of prices) {
  for (const tie of [0.9, 1, 1.1, 1.2]) {
    const make: RouterFactory = (specs) =>
      new Router(specs, { policy: new PrefixAwarePolicy({ tieToleranceMs: tie, ...({ evictionPrice } as object) }), blockTokens: w.blockTokens });
    const r = simulatePolicy(w, fleet, "prefix_aware", make, GATEWAY_VIEW);
    console.log(
      `price ${evictionPrice ? "on " : "off"} tie ${tie.toFixed(1)} ms: hit ${(100 * r.hitRate).toFixed(1)}% p99 ${r.ttftP99Ms.toFixed(1)} ms maxLoad ${r.maxLoadRatio.toFixed(2)}`,
    );
  }
}
