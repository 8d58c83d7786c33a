// pair.ts lines of the scoring set against the record (after-rescore): per tie tolerance and on/off, the mean over
// seeds of hit ÷ the record's oracle hit (issue #12's hit measure) and the mean p99 ÷ the record's best peer's mean
// p99 − 1 (its p99 measure), as bench/sim-tables.ts targets computes them from the record's peers.
//   npx tsx bench/results/return-aware/of-oracle.ts bench/results/return-aware/tie-scoring-moe16.jsonl
import { readFileSync } from "node:fs";

interface Line {
  workload: string;
  backends: number;
  load: number;
  seed: number;
  preset: string;
  tie: number;
  returnAware: boolean;
  ttftP99Ms: number;
  hitRate: number;
}
// bench/sim-tables.ts PEERS.
const PEERS = ["sglang", "llmd", "dynamo", "sagemaker"];
const lines = readFileSync(process.argv[2]!, "utf8")
  .split("\n")
  .filter((l) => l.startsWith("{"))
  .map((l) => JSON.parse(l) as Line);
const record = (l: Line) => {
  const loadTag = l.workload === "mooncake" ? `x${l.load}` : `r${l.load}`;
  const tag = l.preset === "llama-3.1-8b-h100-vllm" ? "" : `-${l.preset}`;
  const f = `bench/results/after-rescore/${l.workload}-${l.backends}b-${loadTag}-scoring-s${l.seed}${tag}.json`;
  return JSON.parse(readFileSync(f, "utf8"));
};
const byKey = new Map<string, Line[]>();
for (const l of lines) {
  const k = `${l.workload} ${l.backends}b ×${l.load} ${l.preset} | tie ${l.tie} | ${l.returnAware ? "return-aware" : "main"}`;
  byKey.set(k, [...(byKey.get(k) ?? []), l]);
}
console.log("| group, tie, policy | seeds | hit of oracle (mean) | p99 vs best peer (mean p99s) |");
console.log("| --- | --- | --- | --- |");
for (const [k, ls] of byKey) {
  let ofOracle = 0;
  let p99 = 0;
  const peerSums = new Map<string, number>();
  for (const l of ls) {
    const r = record(l);
    ofOracle += l.hitRate / r.oracle.hitRate;
    p99 += l.ttftP99Ms;
    for (const p of r.policies) if (PEERS.includes(p.policy)) peerSums.set(p.policy, (peerSums.get(p.policy) ?? 0) + p.ttftP99Ms);
  }
  const best = Math.min(...peerSums.values());
  console.log(`| ${k} | ${ls.length} | ${((ofOracle / ls.length) * 100).toFixed(1)}% | ${((p99 / best - 1) * 100).toFixed(1)}% |`);
}
