// The table of seeds.txt (written by seeds.sh): per seed and run, prefix_aware's TTFT p99 under main,
// burst-split-2's rule with its guard ("guard") and the joiners'-delay test ("jd"), llm-d's, jd against main,
// guard and llm-d, and hit / backends per burst / cold prefills for each version; then means over runs.
// Reads only the audit's own summary lines.
//   npx tsx bench/results/joiner-delay/seeds-table.ts bench/results/joiner-delay/seeds.txt
import { readFileSync } from "node:fs";

interface Line {
  p99: number;
  hit: string;
  perBurst: string;
  cold: string;
}
const file = process.argv[2] ?? "bench/results/joiner-delay/seeds.txt";
const rows = new Map<string, Map<string, Line>>();
let key = "";
let version = "";
for (const line of readFileSync(file, "utf8").split("\n")) {
  const cmd = /^\$ \((\w+)\) npx tsx \S+ (\S+) 8 (\d+) none (\d+) (\S+) llmd$/.exec(line);
  if (cmd) {
    version = cmd[1]!;
    key = `${cmd[4]} | ${cmd[2]} ${cmd[5]!.startsWith("qwen") ? "MoE" : "8B"}`;
    if (!rows.has(key)) rows.set(key, new Map());
    continue;
  }
  const m =
    /^(prefix_aware|llmd): TTFT p50 \d+ ms p99 (\d+) ms hit ([\d.]+%); backends per burst mean ([\d.]+).*cold prefills (\d+)/.exec(
      line,
    );
  if (!m) continue;
  const who = m[1] === "llmd" ? "llmd" : version;
  rows.get(key)!.set(who, { p99: Number(m[2]), hit: m[3]!, perBurst: m[4]!, cold: m[5]! });
}
const rel = (a: number, b: number) => (a / b - 1) * 100;
const pct = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(1)}%`;
console.log(
  "| seed | run | main | guard | jd | llm-d | jd vs main | jd vs guard | jd vs llm-d | hit main / guard / jd | backends per burst main / guard / jd | cold prefills main / guard / jd |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
const groups = new Map<string, { vsMain: number[]; vsGuard: number[]; vsLlmd: number[]; guardVsMain: number[] }>();
for (const [k, r] of rows) {
  const [main, guard, jd, llmd] = ["main", "guard", "jd", "llmd"].map((v) => r.get(v));
  if (!main || !guard || !jd || !llmd) continue;
  console.log(
    `| ${k} | ${main.p99} | ${guard.p99} | ${jd.p99} | ${llmd.p99} | ${pct(rel(jd.p99, main.p99))} | ${pct(rel(jd.p99, guard.p99))} | ${pct(rel(jd.p99, llmd.p99))} | ${main.hit} / ${guard.hit} / ${jd.hit} | ${main.perBurst} / ${guard.perBurst} / ${jd.perBurst} | ${main.cold} / ${guard.cold} / ${jd.cold} |`,
  );
  const seed = Number(k.split(" | ")[0]);
  const g = seed >= 20 ? "20, 22, 27, 30 (clustered)" : "1, 2, 6, 7, 8";
  if (!groups.has(g)) groups.set(g, { vsMain: [], vsGuard: [], vsLlmd: [], guardVsMain: [] });
  const s = groups.get(g)!;
  s.vsMain.push(rel(jd.p99, main.p99));
  s.vsGuard.push(rel(jd.p99, guard.p99));
  s.vsLlmd.push(rel(jd.p99, llmd.p99));
  s.guardVsMain.push(rel(guard.p99, main.p99));
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log("");
console.log("| seeds | runs | guard vs main | jd vs main | jd vs guard | jd vs llm-d | jd worse than main | worst jd vs main |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const [g, s] of groups)
  console.log(
    `| ${g} | ${s.vsMain.length} | ${pct(mean(s.guardVsMain))} | ${pct(mean(s.vsMain))} | ${pct(mean(s.vsGuard))} | ${pct(mean(s.vsLlmd))} | ${s.vsMain.filter((x) => x > 0).length} of ${s.vsMain.length} | ${pct(Math.max(...s.vsMain))} |`,
  );
