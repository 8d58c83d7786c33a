// The table of a seeds file written by burst-split-2/seeds.sh with VERSIONS="main fp": per seed and run,
// prefix_aware's TTFT p99 on main and on first-prefill (fp) and llm-d's; then per group (workload × preset,
// each preset, all) the mean change fp against main and each against llm-d, how many runs fp is worse than
// main, and the worst. Reads only the audit's own summary lines (burst-split-2/seeds-lines.ts).
//   npx tsx bench/results/first-prefill/table.ts bench/results/first-prefill/seeds-84-91.txt
import { groupRuns, readSeedLines } from "../burst-split-2/seeds-lines";

const file = process.argv[2] ?? "bench/results/first-prefill/seeds-84-91.txt";
const rows = readSeedLines(file);
const rel = (a: number, b: number) => (a / b - 1) * 100;
const pct = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(1)}%`;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log("| seed | run | main | fp | llm-d | fp vs main | main / fp vs llm-d | hit main / fp (llm-d) | cold prefills main / fp |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
interface Run {
  group: string;
  main: number;
  fp: number;
  llmd: number;
}
const runs: Run[] = [];
for (const [k, r] of [...rows].sort(
  ([a], [b]) => a.split(" | ")[1]!.localeCompare(b.split(" | ")[1]!) || Number(a.split(" ")[0]) - Number(b.split(" ")[0]),
)) {
  const [m, f, l] = ["main", "fp", "llmd"].map((v) => r.get(v));
  if (!m || !f || !l) continue;
  console.log(
    `| ${k} | ${m.p99} | ${f.p99} | ${l.p99} | ${pct(rel(f.p99, m.p99))} | ${pct(rel(m.p99, l.p99))} / ${pct(rel(f.p99, l.p99))} | ${m.hit} / ${f.hit} (${l.hit}) | ${m.cold} / ${f.cold} |`,
  );
  runs.push({ group: k.split(" | ")[1]!, main: m.p99, fp: f.p99, llmd: l.p99 });
}
const groups = groupRuns(runs);
console.log("\n| group | runs | fp vs main (mean) | main / fp vs llm-d (mean) | fp worse than main | worst fp vs main | best fp vs main |");
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const [g, rs] of groups) {
  const d = rs.map((r) => rel(r.fp, r.main));
  console.log(
    `| ${g} | ${rs.length} | ${pct(mean(d))} | ${pct(mean(rs.map((r) => rel(r.main, r.llmd))))} / ${pct(mean(rs.map((r) => rel(r.fp, r.llmd))))} | ${d.filter((x) => x > 0).length} | ${pct(Math.max(...d))} | ${pct(Math.min(...d))} |`,
  );
}
