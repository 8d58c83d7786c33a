// The table of seeds.txt (written by seeds.sh): per seed and run, prefix_aware's TTFT p99 under three versions
// (VERSIONS="base middle candidate", default "main rule guard"; joiner-delay/ uses "main guard jd"), llm-d's,
// the candidate against each of the others, and hit / backends per burst / cold prefills for each version;
// then means over runs, by seed group. Reads only the audit's own summary lines.
//   npx tsx bench/results/burst-split-2/seeds-table.ts bench/results/burst-split-2/seeds.txt
//   VERSIONS="main guard jd" npx tsx bench/results/burst-split-2/seeds-table.ts bench/results/joiner-delay/seeds.txt
import { readSeedLines } from "./seeds-lines";

const names = (process.env.VERSIONS ?? "main rule guard").split(/\s+/).filter((v) => v !== "");
if (names.length !== 3) throw new RangeError(`VERSIONS: three names (base middle candidate), got "${process.env.VERSIONS}"`);
const [base, middle, cand] = names as [string, string, string];
const file = process.argv[2] ?? "bench/results/burst-split-2/seeds.txt";
const rows = readSeedLines(file);
const rel = (a: number, b: number) => (a / b - 1) * 100;
const pct = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(1)}%`;
const three = `${base} / ${middle} / ${cand}`;
console.log(
  `| seed | run | ${base} | ${middle} | ${cand} | llm-d | ${cand} vs ${base} | ${cand} vs ${middle} | ${cand} vs llm-d | hit ${three} | backends per burst ${three} | cold prefills ${three} |`,
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
const groups = new Map<string, { vsBase: number[]; vsMiddle: number[]; vsLlmd: number[]; middleVsBase: number[] }>();
for (const [k, r] of rows) {
  const [b, m, c, llmd] = [base, middle, cand, "llmd"].map((v) => r.get(v));
  if (!b || !m || !c || !llmd) continue;
  console.log(
    `| ${k} | ${b.p99} | ${m.p99} | ${c.p99} | ${llmd.p99} | ${pct(rel(c.p99, b.p99))} | ${pct(rel(c.p99, m.p99))} | ${pct(rel(c.p99, llmd.p99))} | ${b.hit} / ${m.hit} / ${c.hit} | ${b.perBurst} / ${m.perBurst} / ${c.perBurst} | ${b.cold} / ${m.cold} / ${c.cold} |`,
  );
  const seed = Number(k.split(" | ")[0]);
  const g = seed >= 20 ? "20, 22, 27, 30 (clustered)" : "1, 2, 6, 7, 8";
  if (!groups.has(g)) groups.set(g, { vsBase: [], vsMiddle: [], vsLlmd: [], middleVsBase: [] });
  const s = groups.get(g)!;
  s.vsBase.push(rel(c.p99, b.p99));
  s.vsMiddle.push(rel(c.p99, m.p99));
  s.vsLlmd.push(rel(c.p99, llmd.p99));
  s.middleVsBase.push(rel(m.p99, b.p99));
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log("");
console.log(
  `| seeds | runs | ${middle} vs ${base} | ${cand} vs ${base} | ${cand} vs ${middle} | ${cand} vs llm-d | ${cand} worse than ${base} | worst ${cand} vs ${base} |`,
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const [g, s] of groups)
  console.log(
    `| ${g} | ${s.vsBase.length} | ${pct(mean(s.middleVsBase))} | ${pct(mean(s.vsBase))} | ${pct(mean(s.vsMiddle))} | ${pct(mean(s.vsLlmd))} | ${s.vsBase.filter((x) => x > 0).length} of ${s.vsBase.length} | ${pct(Math.max(...s.vsBase))} |`,
  );
