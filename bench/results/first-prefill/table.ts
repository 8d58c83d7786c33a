// The table of a seeds file written by burst-split-2/seeds.sh with two versions (VERSIONS, default "main fp":
// main and first-prefill; copy-guard's is "base cg"): per seed and run, prefix_aware's TTFT p99 on each and
// llm-d's; then per group (workload × preset, each preset, all) the mean change of the second against the
// first and each against llm-d, how many runs the second is worse, and the worst. Reads only the audit's own
// summary lines (burst-split-2/seeds-lines.ts).
//   npx tsx bench/results/first-prefill/table.ts bench/results/first-prefill/seeds-84-91.txt
//   VERSIONS="base cg" npx tsx bench/results/first-prefill/table.ts bench/results/copy-guard/seeds-92-99.txt
import { groupRuns, readSeedLines } from "../burst-split-2/seeds-lines";

const file = process.argv[2] ?? "bench/results/first-prefill/seeds-84-91.txt";
const rows = readSeedLines(file);
const rel = (a: number, b: number) => (a / b - 1) * 100;
const pct = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(1)}%`;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const [a, b] = (process.env.VERSIONS ?? "main fp").split(" ");
if (!a || !b) throw new Error(`VERSIONS: two version names, got "${process.env.VERSIONS}"`);
console.log(
  `| seed | run | ${a} | ${b} | llm-d | ${b} vs ${a} | ${a} / ${b} vs llm-d | hit ${a} / ${b} (llm-d) | cold prefills ${a} / ${b} |`,
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
interface Run {
  group: string;
  first: number;
  second: number;
  llmd: number;
}
const runs: Run[] = [];
for (const [k, r] of [...rows].sort(
  ([x], [y]) => x.split(" | ")[1]!.localeCompare(y.split(" | ")[1]!) || Number(x.split(" ")[0]) - Number(y.split(" ")[0]),
)) {
  const [m, f, l] = [a, b, "llmd"].map((v) => r.get(v));
  if (!m || !f || !l) continue;
  console.log(
    `| ${k} | ${m.p99} | ${f.p99} | ${l.p99} | ${pct(rel(f.p99, m.p99))} | ${pct(rel(m.p99, l.p99))} / ${pct(rel(f.p99, l.p99))} | ${m.hit} / ${f.hit} (${l.hit}) | ${m.cold} / ${f.cold} |`,
  );
  runs.push({ group: k.split(" | ")[1]!, first: m.p99, second: f.p99, llmd: l.p99 });
}
const groups = groupRuns(runs);
console.log(
  `\n| group | runs | ${b} vs ${a} (mean) | ${a} / ${b} vs llm-d (mean) | ${b} worse than ${a} | worst ${b} vs ${a} | best ${b} vs ${a} |`,
);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const [g, rs] of groups) {
  const d = rs.map((r) => rel(r.second, r.first));
  console.log(
    `| ${g} | ${rs.length} | ${pct(mean(d))} | ${pct(mean(rs.map((r) => rel(r.first, r.llmd))))} / ${pct(mean(rs.map((r) => rel(r.second, r.llmd))))} | ${d.filter((x) => x > 0).length} | ${pct(Math.max(...d))} | ${pct(Math.min(...d))} |`,
  );
}
