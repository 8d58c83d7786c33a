// Which clairvoyant runs change input with the MoE max_model_len 40,960 → 131,072: per workload and max_tokens model,
// how many beliefs differ, and the longest prompt + output. npx tsx bench/results/model-len/beliefs-check.mts (MOONCAKE_TRACE set)
import { maxTokensBeliefs } from "../../../sim/clairvoyant-knowledge";
import { loadSetData, SET_SEEDS } from "../../../sim/eval-sets";
import { DEFAULT_PREFIX_TOKENS, prepareWorkload } from "../../../sim/prepare";
import { QWEN3_30B_A3B_H100_VLLM } from "../../../sim/model/presets";
const runs: [string, number, number, number, number | undefined][] = [];
for (const set of ["scoring", "tuning"] as const) {
  const seeds = set === "scoring" ? [3, 4, 5] : [1, 2];
  for (const seed of seeds) {
    runs.push(["multi-turn", 40, 1, seed, 10000], ["zipf", 65, 1, seed, undefined], ["no-shared-prefix", 25, 1, seed, undefined], ["generated-shared-prefix", 45, 1, seed, undefined]);
  }
}
const out: string[] = [];
for (const set of ["scoring", "tuning"] as const) {
  const todo = runs.filter((r) => (set === "scoring" ? r[3] >= 3 : r[3] < 3));
  todo.push(["mooncake", 1, 2, set === "scoring" ? 3 : 1, undefined]);
  for (const [wl, rate, speed, seed, requests] of todo) {
    const data = await loadSetData(wl, { rate, seed, speed, requests, set });
    for (const mt of ["clients", "capped", "tight"] as const) {
      const p = prepareWorkload(data.workload, { prefixTokens: DEFAULT_PREFIX_TOKENS, maxTokens: mt, seed });
      const cfg = { ...QWEN3_30B_A3B_H100_VLLM, blockTokens: p.blockTokens };
      // main's rule with its table's 40,960 (the new code refuses a prompt past the context instead of believing 1).
      const kv = Math.floor(cfg.kvCacheTokens / cfg.blockTokens) * cfg.blockTokens;
      const a = p.requests.map((r, i) => Math.max(1, Math.min(p.maxTokens[i] ?? 40_960 - r.promptTokens, kv - r.promptTokens)));
      const b = maxTokensBeliefs(p, { ...cfg, maxModelLen: 131_072 });
      let past40 = 0; let diff = 0; let sentOver = 0; let maxPO = 0; let over40 = 0; let maxOut = 0;
      p.requests.forEach((r, i) => {
        if (a[i] !== b[i]) diff++;
        if (r.promptTokens >= 40_960) past40++;
        const s = p.maxTokens[i];
        if (s !== undefined && r.promptTokens + s > 131_072) sentOver++;
        maxPO = Math.max(maxPO, r.promptTokens + r.outputTokens);
        maxOut = Math.max(maxOut, r.outputTokens);
        if (p.maxTokens[i] === undefined && 40_960 - r.promptTokens < 5000) over40++;
      });
      out.push(`${set} ${wl} s${seed} mt=${mt}: n=${p.requests.length} beliefs differ ${diff}; absent with ctx-left<5000 @40960: ${over40}; sent cap+prompt>131072: ${sentOver}; max prompt+output ${maxPO}; max output ${maxOut}; prompts ≥ 40,960: ${past40}`);
    }
  }
}
console.log(out.join("\n"));
