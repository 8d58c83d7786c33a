// Decision regret of prefix_aware (issue #12): at every decision, the exact TTFT the request would get on
// each backend (engine copies, sim/clairvoyant.ts placementCost) against what the cost model predicted.
//   npx tsx bench/results/decision-regret/audit.ts [WORKLOAD] [BACKENDS] [LOAD] [SET] [SEEDS] [PRESET]
// defaults: no-shared-prefix 8 25 scoring 3,4,5 qwen3-30b-a3b-h100-vllm. Prints the report; writes one CSV
// row per decision (chosen and best candidate) to bench/results/decision-regret/<run>.csv.
// INFLIGHT_MS=x, KV_WEIGHT=y: the cost model's decodeMsPerInflight (default 2) and kvWeight (default 0.05), to
// see a variant's regret on its own trajectory (a diagnostic, not a gate).
import { writeFileSync } from "node:fs";
import { loadAuditRun, quantileOf } from "../audit-run";
import {
  costR2,
  FEATURES,
  leastSquares,
  REGRET_MS,
  type Regret,
  regrettedDifferences,
  rescoredRegret,
  regretsOf,
  summarize,
  withinRows,
} from "./analyze";
import { collectDecisions, type Decision } from "./collect";

const [spec = "no-shared-prefix", backendsS = "8", loadS = "25", set = "scoring", seedsS = "3,4,5", preset = "qwen3-30b-a3b-h100-vllm"] =
  process.argv.slice(2);
const seeds = seedsS.split(",").map(Number);
const options = {
  ...(process.env.INFLIGHT_MS !== undefined ? { decodeMsPerInflight: Number(process.env.INFLIGHT_MS) } : {}),
  ...(process.env.KV_WEIGHT !== undefined ? { kvWeight: Number(process.env.KV_WEIGHT) } : {}),
};
/** The variant's part of a file name ("" with the defaults). */
const variant = `${options.decodeMsPerInflight !== undefined ? `-inflight${options.decodeMsPerInflight}` : ""}${options.kvWeight !== undefined ? `-kv${options.kvWeight}` : ""}`;
const f1 = (x: number) => x.toFixed(1);
const pc = (x: number) => `${(100 * x).toFixed(1)}%`;

function printSummary(label: string, rs: readonly Regret[]): void {
  const s = summarize(rs);
  console.log(
    `| ${label} | ${s.decisions} | ${f1(s.p50)} | ${f1(s.p90)} | ${f1(s.p99)} | ${f1(s.mean)} | ${pc(s.over)} | ${pc(s.overCandidate)} | ${s.tail} (≥ ${f1(s.tailFrom)}) | ${pc(s.tailOver)} | ${pc(s.tailOverCandidate)} | ${pc(s.tailRegretShare)} | ${s.realizedOverExact.toFixed(3)} |`,
  );
}

function csv(decisions: readonly Decision[], rs: readonly Regret[]): string {
  const cols = ["ttft", "cost", "queueWait", "memoryWait", "leastWait", "prefill", "kv", "inflightTerm", "repeat", "foreign", "ours", "running", "waiting", "decoding", "decodeContext", "stepWait", "cachedTokens"] as const;
  const head = ["i", "now", "prompt", "output", "reason", "realized", "regret", "regretCandidate", "chosen", "bestCandidate"];
  const lines = [[...head, ...cols.map((c) => `chosen_${c}`), ...cols.map((c) => `best_${c}`)].join(",")];
  for (const r of rs) {
    const d = r.d;
    const b = r.bestCandidate >= 0 ? r.bestCandidate : d.chosen;
    const row = [d.i, f1(d.now), d.promptTokens, d.outputTokens, d.reason, f1(d.realized), f1(r.regret), f1(r.regretCandidate), d.chosen, b];
    for (const x of [d.at[d.chosen]!, d.at[b]!]) for (const c of cols) row.push(Number.isFinite(x[c]) ? Number(x[c].toFixed(2)) : "");
    lines.push(row.join(","));
  }
  void decisions;
  return `${lines.join("\n")}\n`;
}

const all: Decision[] = [];
const allRegrets: Regret[] = [];
const runs: { seed: number; rs: Regret[]; p50: number; p99: number; hit: number; mlr: number; rate: number }[] = [];
for (const seed of seeds) {
  const { w, fleet } = await loadAuditRun({ spec, backends: Number(backendsS), load: Number(loadS), set, seed, preset });
  const t0 = performance.now();
  const res = collectDecisions(w, fleet, options);
  const rs = regretsOf(res.decisions);
  runs.push({ seed, rs, p50: res.p50, p99: res.p99, hit: res.hitRate, mlr: res.maxLoadRatio, rate: res.learnedRate });
  all.push(...res.decisions);
  allRegrets.push(...rs);
  const tag = `${spec}-${backendsS}b-${loadS}-${set}-s${seed}-${preset}${variant}`;
  writeFileSync(new URL(`./${tag}.csv`, import.meta.url), csv(res.decisions, rs));
  console.error(`seed ${seed}: ${res.decisions.length} decisions in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

console.log(`# Decision regret: prefix_aware on ${spec}, ${backendsS} backends, load ${loadS}, ${set} seeds ${seedsS}, ${preset}`);
if (variant !== "") console.log(`Cost model options: ${JSON.stringify(options)}`);
console.log("\nRuns as routed (must equal bench:sim's prefix_aware report for the same flags):");
for (const r of runs)
  console.log(`- seed ${r.seed}: TTFT p50 ${f1(r.p50)} ms, p99 ${f1(r.p99)} ms, hit ${pc(r.hit)}, maxLoadRatio ${r.mlr.toFixed(2)}, learned prefill rate ${r.rate.toFixed(0)} tok/s`);

console.log(
  `\nRegret = exact TTFT on the chosen backend − on the best backend, both at the decision (ms). "cand.": best among the cost model's candidates (bounds and hold back kept). Tail = slowest 1% by realized TTFT.\n`,
);
console.log(
  `| run | decisions | p50 | p90 | p99 | mean | > ${REGRET_MS} ms | > ${REGRET_MS} ms (cand.) | tail (TTFT ms) | tail > ${REGRET_MS} ms | tail > ${REGRET_MS} ms (cand.) | tail: regret / TTFT | realized / exact (p50) |`,
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of runs) printSummary(`seed ${r.seed}`, r.rs);
printSummary("pooled", allRegrets);

const rd = regrettedDifferences(allRegrets);
console.log(
  `\nRegretted decisions (regret among candidates > ${REGRET_MS} ms, pooled: ${rd.count}): chosen − best candidate, median and mean of each quantity.\n`,
);
console.log("| quantity | median | mean |\n|---|---|---|");
for (const k of Object.keys(rd.median)) console.log(`| ${k} | ${f1(rd.median[k]!)} | ${f1(rd.mean[k]!)} |`);

// How much of the regret the step in progress accounts for, and how much of it sat in steps carrying a prefill.
const regretted = allRegrets.filter((r) => r.regretCandidate > REGRET_MS && r.bestCandidate >= 0);
const sumOf = (rs: readonly Regret[], f: (r: Regret) => number) => rs.reduce((a, r) => a + f(r), 0);
const regretSum = sumOf(regretted, (r) => r.regretCandidate);
const holdsPrefill = (r: Regret) => r.d.at[r.d.chosen]!.running > r.d.at[r.d.chosen]!.decoding;
console.log(
  `\nOver the regretted decisions, Σ (step in progress, chosen − best candidate) = ${pc(
    sumOf(regretted, (r) => r.d.at[r.d.chosen]!.stepWait - r.d.at[r.bestCandidate]!.stepWait) / regretSum,
  )} of Σ regret; ${pc(
    sumOf(regretted.filter(holdsPrefill), (r) => r.regretCandidate) / regretSum,
  )} of Σ regret is at decisions where the chosen engine's step held a prefill.`,
);

console.log(
  `\nWithin-decision fits (each candidate's value minus its decision's mean over candidates; pooled; R² of the exact TTFT's spread between candidates).\n`,
);
console.log(`- the cost model's total, coefficient 1: R² ${costR2(all).toFixed(3)}`);
const sets: [string, string[]][] = [
  ["cost terms", ["start", "prefill", "kv", "ours"]],
  // Without a second client our count is the engine's running + waiting exactly: only waiting is new.
  ["cost terms + engine waiting (scrape)", ["start", "prefill", "kv", "ours", "waiting"]],
  ["cost terms + engine decoding, decode context (not observable)", ["start", "prefill", "kv", "ours", "decoding", "context"]],
  ["cost terms + step in progress (not observable)", ["start", "prefill", "kv", "ours", "stepWait"]],
  ["ours alone", ["ours"]],
  ["step in progress alone", ["stepWait"]],
  ["predicted start alone", ["start"]],
  ["engine decoding alone", ["decoding"]],
  ["engine waiting alone", ["waiting"]],
];
for (const [label, names] of sets) {
  const fs = names.map((n) => FEATURES[n]!);
  const { xs, ys } = withinRows(all, fs);
  const { beta, r2 } = leastSquares(xs, ys);
  console.log(`- ${label}: R² ${r2.toFixed(3)}; ${fs.map((f, j) => `${f.name} ${beta[j]!.toFixed(3)}`).join(", ")}`);
}

// The slowest 1% of each run: what separated the chosen engine from the best one.
const tailOf = (rs: readonly Regret[]) => {
  const from = quantileOf(
    rs.map((r) => r.d.realized),
    0.99,
  );
  return rs.filter((r) => r.d.realized >= from);
};
const tail = runs.flatMap((r) => tailOf(r.rs));
console.log(
  "\nRescored on the same trajectory: each decision sent to the candidate with the least score instead (later decisions unchanged, no re-simulation; ring ties ignored).\n",
);
console.log(`| score | mean regret | > ${REGRET_MS} ms | p90 | slowest 1%: mean regret | slowest 1%: > ${REGRET_MS} ms |\n|---|---|---|---|---|---|`);
const rescores: [string, (x: Decision["at"][number]) => number][] = [
  ["the cost as charged (argmin)", (x) => x.cost],
  ["without the in-flight term", (x) => x.cost - x.inflightTerm],
  ["without the kv term", (x) => x.cost - x.kv],
  ["without the in-flight and kv terms", (x) => x.cost - x.inflightTerm - x.kv],
  ["the start halved (as the fit has it)", (x) => x.cost - x.start / 2],
  ["the in-flight term at 0.5 ms per request (a quarter)", (x) => x.cost - 0.75 * x.inflightTerm],
  ["least of ours in flight (a reference)", (x) => x.ours],
  ["+ step in progress (not observable: a bound)", (x) => x.cost + x.stepWait],
  // A prefill in the step in progress is one the gateway sent (no second client here): what a ledger that
  // knew each prefill's true length would add. A decode-only step's end is the engine's phase.
  ["+ step in progress where it holds a prefill (a bound for the prefill ledger)", (x) => x.cost + (x.running > x.decoding ? x.stepWait : 0)],
  ["+ step in progress where it is decode only (a bound for the phase)", (x) => x.cost + (x.running > x.decoding ? 0 : x.stepWait)],
  ["the exact TTFT among candidates", (x) => x.ttft],
];
for (const [label, score] of rescores) {
  const r = rescoredRegret(all, score);
  const t = rescoredRegret(
    tail.map((x) => x.d),
    score,
  );
  console.log(`| ${label} | ${f1(r.mean)} | ${pc(r.over)} | ${f1(r.p90)} | ${f1(t.mean)} | ${pc(t.over)} |`);
}

// The ledger against a prefill in progress: on the chosen engine, when its step held a prefill (every one
// sent by the gateway here), what the virtual queue still counted against what was left of the step.
const inPrefill = all.filter((d) => d.at[d.chosen]!.running > d.at[d.chosen]!.decoding);
const q = (xs: number[], p: number) => f1(quantileOf(xs, p));
const left = inPrefill.map((d) => d.at[d.chosen]!.stepWait);
const counted = inPrefill.map((d) => d.at[d.chosen]!.queueWait);
console.log(
  `\nThe chosen engine's step held a prefill at ${inPrefill.length} of ${all.length} decisions (${pc(inPrefill.length / all.length)}): the step's remaining time p50 ${q(left, 0.5)} / p90 ${q(left, 0.9)} ms; the ledger's queue wait there p50 ${q(counted, 0.5)} / p90 ${q(counted, 0.9)} ms, 0 at ${pc(counted.filter((x) => x === 0).length / Math.max(1, counted.length))}.`,
);

const stepOf = (r: Regret, b: number) => r.d.at[b]!.stepWait;
console.log(
  `The slowest 1% (${tail.length} requests, pooled per run): regret p50 ${q(
    tail.map((r) => r.regret),
    0.5,
  )} ms; step in progress on the chosen engine p50 ${q(
    tail.map((r) => stepOf(r, r.d.chosen)),
    0.5,
  )} ms, on the best ${q(
    tail.map((r) => stepOf(r, r.best)),
    0.5,
  )} ms; the chosen engine's step held a prefill at ${pc(
    tail.filter((r) => r.d.at[r.d.chosen]!.running > r.d.at[r.d.chosen]!.decoding).length / Math.max(1, tail.length),
  )}; prompt p50 ${q(
    tail.map((r) => r.d.promptTokens),
    0.5,
  )} tokens (all requests ${q(
    all.map((d) => d.promptTokens),
    0.5,
  )}).`,
);
