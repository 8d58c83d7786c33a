/**
 * The largest prompt count the routing core is given (the gateway's view: exact in the key window,
 * estimated past it) on each workload the race runs, against the presets' KV capacities: whether the
 * bound of src/routing/prompt-bound.ts can act in the simulator. Every seed 1-5, the whole workload
 * (Mooncake: the tuning set is requests 1-6015, the scoring set 6016-12031).
 * Run: MOONCAKE_TRACE=/work/shared/traces/mooncake_conversation.jsonl npx tsx bench/results/estimate-bound/max-counts.ts
 */
import { ENGINE_PRESETS as PRESETS } from "../../../sim/model/presets";
import { prepareWorkload } from "../../../sim/prepare";
import { loadWorkload, WORKLOAD_NAMES } from "../../../sim/workloads/index";

const kv = Object.entries(PRESETS).map(([name, p]) => `${name} ${p.kvCacheTokens}`);
console.log(`preset KV: ${kv.join(", ")}`);
for (const name of WORKLOAD_NAMES) {
  for (const seed of [1, 2, 3, 4, 5]) {
    const w = prepareWorkload(await loadWorkload(name, { rate: 40, seed }), { seed });
    let est = 0;
    let truth = 0;
    for (let i = 0; i < w.requests.length; i++) {
      est = Math.max(est, w.gatewayPromptTokens[i]!);
      truth = Math.max(truth, w.requests[i]!.promptTokens);
    }
    // Which requests (1-based; a trace's tuning set is its first half, its scoring set the second).
    const over = w.gatewayPromptTokens.flatMap((t, i) => (t > 132_096 ? [`#${i + 1} ${t}`] : []));
    console.log(
      `${name} seed ${seed}: ${w.requests.length} requests, largest true ${truth}, largest count ${est}, counts > 132,096: ${over.length}${over.length > 0 ? ` (${over.join(", ")})` : ""}`,
    );
  }
}
