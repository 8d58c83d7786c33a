// (first-prefill/table.ts with the versions renamed.) The table of a seeds file written by burst-split-2/seeds.sh with VERSIONS="base cg": per seed and run,
// prefix_aware's TTFT p99 on base and on copy-guard (cg) and llm-d's; then per group (workload × preset,
// each preset, all) the mean change cg against base and each against llm-d, how many runs cg is worse than
// base, and the worst. Reads only the audit's own summary lines (burst-split-2/seeds-lines.ts).
//   npx tsx bench/results/copy-guard/table.ts bench/results/copy-guard/seeds-92-99.txt
import { readSeedLines } from "../burst-split-2/seeds-lines";

const file = process.argv[2] ?? "bench/results/copy-guard/seeds-92-99.txt";
const rows = readSeedLines(file);
const rel = (a: number, b: number) => (a / b - 1) * 100;
const pct = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(1)}%`;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log("| seed | run | base | cg | llm-d | cg vs base | base / cg vs llm-d | hit base / cg (llm-d) | cold prefills base / cg |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
interface Run {
  group: string;
  base: number;
  cg: number;
  llmd: number;
}
const runs: Run[] = [];
for (const [k, r] of [...rows].sort(
  ([a], [b]) => a.split(" | ")[1]!.localeCompare(b.split(" | ")[1]!) || Number(a.split(" ")[0]) - Number(b.split(" ")[0]),
)) {
  const [m, f, l] = ["base", "cg", "llmd"].map((v) => r.get(v));
  if (!m || !f || !l) continue;
  console.log(
    `| ${k} | ${m.p99} | ${f.p99} | ${l.p99} | ${pct(rel(f.p99, m.p99))} | ${pct(rel(m.p99, l.p99))} / ${pct(rel(f.p99, l.p99))} | ${m.hit} / ${f.hit} (${l.hit}) | ${m.cold} / ${f.cold} |`,
  );
  runs.push({ group: k.split(" | ")[1]!, base: m.p99, cg: f.p99, llmd: l.p99 });
}
const groups = new Map<string, Run[]>();
const add = (g: string, r: Run) => groups.set(g, [...(groups.get(g) ?? []), r]);
for (const r of runs) {
  add(r.group, r);
  add(`all ${r.group.split(" ")[1]}`, r);
  add("all", r);
}
console.log("\n| group | runs | cg vs base (mean) | base / cg vs llm-d (mean) | cg worse than base | worst cg vs base | best cg vs base |");
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const [g, rs] of groups) {
  const d = rs.map((r) => rel(r.cg, r.base));
  console.log(
    `| ${g} | ${rs.length} | ${pct(mean(d))} | ${pct(mean(rs.map((r) => rel(r.base, r.llmd))))} / ${pct(mean(rs.map((r) => rel(r.cg, r.llmd))))} | ${d.filter((x) => x > 0).length} | ${pct(Math.max(...d))} | ${pct(Math.min(...d))} |`,
  );
}
