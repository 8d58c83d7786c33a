/**
 * Where the output bound of src/routing/prompt-bound.ts can act in the simulator: requests whose routing
 * count (the gateway's prompt count, then the max_tokens its client sent, sim/client-max-tokens.ts "clients")
 * sum past a preset's KV capacity. Every seed 1-5, the whole workload (Mooncake: the tuning set is requests
 * 1-6015, the scoring set 6016-12031).
 * Run: MOONCAKE_TRACE=/work/shared/traces/mooncake_conversation.jsonl npx tsx bench/results/est-bound-2/over-kv.ts
 */
import { ENGINE_PRESETS as PRESETS } from "../../../sim/model/presets";
import { prepareWorkload } from "../../../sim/prepare";
import { loadWorkload, WORKLOAD_NAMES } from "../../../sim/workloads/index";

const kvs = Object.entries(PRESETS).map(([name, p]) => [name, p.kvCacheTokens] as const);
console.log(`preset KV: ${kvs.map(([n, k]) => `${n} ${k}`).join(", ")}`);
for (const name of WORKLOAD_NAMES) {
  for (const seed of [1, 2, 3, 4, 5]) {
    const w = prepareWorkload(await loadWorkload(name, { rate: 40, seed }), { seed });
    let largest = 0;
    let largestMax = 0;
    const over = kvs.map(() => [] as string[]);
    for (let i = 0; i < w.requests.length; i++) {
      const prompt = w.gatewayPromptTokens[i]!;
      const max = w.maxTokens[i];
      if (max === undefined) continue;
      largest = Math.max(largest, prompt + max);
      largestMax = Math.max(largestMax, max);
      kvs.forEach(([, kv], k) => {
        if (prompt + max > kv) over[k]!.push(`#${i + 1} ${prompt}+${max}`);
      });
    }
    const where = kvs.map(([n], k) => `${n}: ${over[k]!.length}${over[k]!.length > 0 ? ` (${over[k]!.join(", ")})` : ""}`);
    console.log(
      `${name} seed ${seed}: largest max_tokens ${largestMax}, largest prompt + max_tokens ${largest}; past KV on ${where.join("; ")}`,
    );
  }
}
