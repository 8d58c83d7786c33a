// The table of seeds.txt (written by seeds.sh): per seed and run, prefix_aware's TTFT p99 under main, the
// rule and the rule with the guard, llm-d's, the guard against main and against llm-d, and hit / backends
// per burst / cold prefills for each version. Reads only the audit's own summary lines.
//   npx tsx bench/results/burst-split-2/seeds-table.ts bench/results/burst-split-2/seeds.txt
import { readFileSync } from "node:fs";

interface Line {
  p99: number;
  hit: string;
  perBurst: string;
  cold: string;
}
const file = process.argv[2] ?? "bench/results/burst-split-2/seeds.txt";
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
  const m = /^(prefix_aware|llmd): TTFT p50 \d+ ms p99 (\d+) ms hit ([\d.]+%); backends per burst mean ([\d.]+).*cold prefills (\d+)/.exec(
    line,
  );
  if (!m) continue;
  const who = m[1] === "llmd" ? "llmd" : version;
  rows.get(key)!.set(who, { p99: Number(m[2]), hit: m[3]!, perBurst: m[4]!, cold: m[5]! });
}
const pct = (a: number, b: number) => `${a >= b ? "+" : "−"}${Math.abs((a / b - 1) * 100).toFixed(1)}%`;
console.log("| seed | run | main | rule | guard | llm-d | guard vs main | guard vs rule | guard vs llm-d | hit main / rule / guard | backends per burst main / rule / guard | cold prefills main / rule / guard |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
for (const [k, r] of rows) {
  const [main, rule, guard, llmd] = ["main", "rule", "guard", "llmd"].map((v) => r.get(v));
  if (!main || !rule || !guard || !llmd) continue;
  console.log(
    `| ${k} | ${main.p99} | ${rule.p99} | ${guard.p99} | ${llmd.p99} | ${pct(guard.p99, main.p99)} | ${pct(guard.p99, rule.p99)} | ${pct(guard.p99, llmd.p99)} | ${main.hit} / ${rule.hit} / ${guard.hit} | ${main.perBurst} / ${rule.perBurst} / ${guard.perBurst} | ${main.cold} / ${rule.cold} / ${guard.cold} |`,
  );
}
