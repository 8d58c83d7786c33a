/**
 * prefix_aware in two folders of simulator reports, group by group (one group = one workload, backend
 * count, preset and set; the seeds averaged): p99 TTFT, hit rate and its share of the pooled oracle,
 * e2e p99, maxLoadRatio (the worst seed). A Markdown table on stdout.
 *
 *   npx tsx bench/results/output-blocks/compare.ts BEFORE_FOLDER AFTER_FOLDER tuning|scoring
 *
 * Folders are under bench/results/. Only report files present in both are compared.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const RESULTS = join(dirname(fileURLToPath(import.meta.url)), "..");
const [beforeDir, afterDir, set] = process.argv.slice(2);
if (beforeDir === undefined || afterDir === undefined || (set !== "tuning" && set !== "scoring")) {
  console.error("usage: compare.ts BEFORE_FOLDER AFTER_FOLDER tuning|scoring");
  process.exit(2);
}

interface Figures {
  hit: number;
  ofOracle: number;
  p99: number;
  e2eP99: number;
  load: number;
}

function read(folder: string, file: string): Figures {
  const d = JSON.parse(readFileSync(join(RESULTS, folder, file), "utf8"));
  const p = d.policies.find((x: { policy: string }) => x.policy === "prefix_aware");
  if (p === undefined) throw new Error(`${folder}/${file}: no prefix_aware`);
  return {
    hit: p.hitRate,
    ofOracle: d.oracle.hitRate > 0 ? p.hitRate / d.oracle.hitRate : Number.NaN,
    p99: p.ttftP99Ms,
    e2eP99: p.e2eP99Ms,
    load: p.maxLoadRatio,
  };
}

const files = readdirSync(join(RESULTS, afterDir)).filter(
  (f) => f.endsWith(".json") && f.includes(`-${set}`) && readdirSync(join(RESULTS, beforeDir)).includes(f),
);
// The group of a report: its name without the seed.
const groups = new Map<string, string[]>();
for (const f of files.sort()) {
  const g = f.replace(/-s\d+(?=[-.])/, "").replace(/\.json$/, "");
  groups.set(g, [...(groups.get(g) ?? []), f]);
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const ms = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x < 100 ? 1 : 0)} ms`);
const pct = (x: number) => (Number.isNaN(x) ? "–" : `${(100 * x).toFixed(1)}%`);
const delta = (a: number, b: number) => `${b >= a ? "+" : "−"}${Math.abs(100 * (b / a - 1)).toFixed(1)}%`;

console.log(`| group (${set}, seeds averaged) | p99: ${beforeDir} → ${afterDir} | Δ p99 | hit (of oracle) | e2e p99 Δ | maxLoadRatio |`);
console.log("| --- | --- | --- | --- | --- | --- |");
for (const [g, fs] of groups) {
  const b = fs.map((f) => read(beforeDir, f));
  const a = fs.map((f) => read(afterDir, f));
  const avg = (xs: Figures[], k: keyof Figures) => mean(xs.map((x) => x[k]));
  const worst = (xs: Figures[]) => Math.max(...xs.map((x) => x.load)).toFixed(2);
  const perSeed = fs.length > 1 ? ` [${fs.map((_, i) => delta(b[i]!.p99, a[i]!.p99)).join(", ")}]` : "";
  console.log(
    `| ${g} (${fs.length}) | ${ms(avg(b, "p99"))} → ${ms(avg(a, "p99"))} | ${delta(avg(b, "p99"), avg(a, "p99"))}${perSeed} | ` +
      `${pct(avg(b, "hit"))} (${pct(avg(b, "ofOracle"))}) → ${pct(avg(a, "hit"))} (${pct(avg(a, "ofOracle"))}) | ` +
      `${delta(avg(b, "e2eP99"), avg(a, "e2eP99"))} | ${worst(b)} → ${worst(a)} |`,
  );
}
