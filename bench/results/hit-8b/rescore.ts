// The kv term's shape, rescored on prefix_aware's own trajectory (decision-regret/collect.ts: exact TTFT on every
// backend at every decision): each decision sent to the candidate with the least score instead (later decisions
// unchanged, no re-simulation). A diagnostic, not a gate.
//   MOONCAKE_TRACE=... npx tsx bench/results/hit-8b/rescore.ts WORKLOAD BACKENDS LOAD SET SEEDS PRESET
// Scores: the cost as charged; the kv term scaled by the share of the prompt to prefill there (uncached ÷
// prompt: the decode work in flight slows the steps of a chunked prefill, and a request that is all cached
// has almost no prefill steps to slow); the kv term dropped. The uncached tokens are read back from the
// prefill term at the run's learned rate (an approximation: the rate moves a little during the run).
import { loadAuditRun, quantileOf } from "../audit-run";
import { collectDecisions, type BackendAt, type Decision } from "../decision-regret/collect";

const [spec = "mooncake", backendsS = "8", loadS = "2.5", set = "tuning", seedsS = "1,2", preset = "llama-3.1-8b-h100-vllm"] =
  process.argv.slice(2);
const all: Decision[] = [];
const rates: number[] = [];
for (const seed of seedsS.split(",").map(Number)) {
  const { w, fleet } = await loadAuditRun({
    spec,
    backends: Number(backendsS),
    load: Number(loadS),
    set,
    seed,
    preset,
    ...(process.env.REQUESTS !== undefined ? { requests: Number(process.env.REQUESTS) } : {}),
  });
  const res = collectDecisions(w, fleet);
  for (const d of res.decisions) rates.push(res.learnedRate);
  all.push(...res.decisions);
  console.log(`- seed ${seed}: p99 ${res.p99.toFixed(1)} ms, hit ${(100 * res.hitRate).toFixed(2)}%, learned rate ${res.learnedRate.toFixed(0)} tok/s`);
}
const share = (x: BackendAt, d: Decision, rate: number) => Math.min(1, (x.prefill * rate) / 1000 / Math.max(1, d.promptTokens));
const scores: [string, (x: BackendAt, d: Decision, rate: number) => number][] = [
  ["as charged", (x) => x.cost],
  ["kv × uncached share", (x, d, r) => x.cost - x.kv + x.kv * share(x, d, r)],
  ["kv dropped", (x) => x.cost - x.kv],
];
const tail = quantileOf(
  all.map((d) => d.realized),
  0.99,
);
console.log(`\n| score | mean regret | > 10 ms | p90 | tail (realized ≥ ${tail.toFixed(0)} ms): mean regret | cached tokens of the pick (% of prompt tokens) | mean exact TTFT of the pick | p99 of exact TTFT of the pick |`);
console.log("|---|---|---|---|---|---|---|---|");
for (const [label, score] of scores) {
  const regrets: number[] = [];
  const tailR: number[] = [];
  const ttfts: number[] = [];
  let cached = 0;
  let prompt = 0;
  all.forEach((d, k) => {
    let pick = -1;
    for (let b = 0; b < d.at.length; b++)
      if (d.at[b]!.candidate && (pick < 0 || score(d.at[b]!, d, rates[k]!) < score(d.at[pick]!, d, rates[k]!))) pick = b;
    if (pick < 0) pick = d.chosen;
    let best = 0;
    for (let b = 1; b < d.at.length; b++) if (d.at[b]!.ttft < d.at[best]!.ttft) best = b;
    const r = d.at[pick]!.ttft - d.at[best]!.ttft;
    regrets.push(r);
    ttfts.push(d.at[pick]!.ttft);
    if (d.realized >= tail) tailR.push(r);
    cached += d.at[pick]!.cachedTokens;
    prompt += d.promptTokens;
  });
  const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length);
  console.log(
    `| ${label} | ${mean(regrets).toFixed(1)} | ${((100 * regrets.filter((x) => x > 10).length) / regrets.length).toFixed(1)}% | ${quantileOf(regrets, 0.9).toFixed(1)} | ${mean(tailR).toFixed(1)} | ${((100 * cached) / prompt).toFixed(2)} | ${mean(ttfts).toFixed(1)} | ${quantileOf(ttfts, 0.99).toFixed(0)} |`,
  );
}
