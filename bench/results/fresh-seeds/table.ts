// The table of fresh-seeds/seeds.txt (written by burst-split-2/seeds.sh): per seed and run, prefix_aware's TTFT p99
// under before / jk / ig2 and llm-d's, ig2 against each; then, per group (workload × preset, each preset, all),
// each version's mean p99 change against before and against llm-d, how many runs ig2 is worse than before / jk,
// and the worst. Reads only the audit's own summary lines (burst-split-2/seeds-lines.ts).
//   npx tsx bench/results/fresh-seeds/table.ts bench/results/fresh-seeds/seeds.txt
import { groupRuns, readSeedLines } from "../burst-split-2/seeds-lines";

const versions = ["before", "jk", "ig2"] as const;
const file = process.argv[2] ?? "bench/results/fresh-seeds/seeds.txt";
const rows = readSeedLines(file);
const rel = (a: number, b: number) => (a / b - 1) * 100;
const pct = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(1)}%`;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(
  "| seed | run | before | jk | ig2 | llm-d | ig2 vs before | ig2 vs jk | ig2 vs llm-d | hit before / jk / ig2 (llm-d) | backends per burst before / jk / ig2 | cold prefills before / jk / ig2 |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
interface Run {
  key: string;
  group: string;
  p: Record<string, number>;
}
const runs: Run[] = [];
for (const [k, r] of [...rows].sort(
  ([a], [b]) => a.split(" | ")[1]!.localeCompare(b.split(" | ")[1]!) || Number(a.split(" ")[0]) - Number(b.split(" ")[0]),
)) {
  const [b, j, c, l] = [...versions, "llmd"].map((v) => r.get(v));
  if (!b || !j || !c || !l) continue;
  console.log(
    `| ${k} | ${b.p99} | ${j.p99} | ${c.p99} | ${l.p99} | ${pct(rel(c.p99, b.p99))} | ${pct(rel(c.p99, j.p99))} | ${pct(rel(c.p99, l.p99))} | ${b.hit} / ${j.hit} / ${c.hit} (${l.hit}) | ${b.perBurst} / ${j.perBurst} / ${c.perBurst} | ${b.cold} / ${j.cold} / ${c.cold} |`,
  );
  runs.push({ key: k, group: k.split(" | ")[1]!, p: { before: b.p99, jk: j.p99, ig2: c.p99, llmd: l.p99 } });
}
const groups = groupRuns(runs);
const worst = (rs: Run[], a: string, b: string) => {
  const w = rs.reduce((x, y) => (rel(y.p[a]!, y.p[b]!) > rel(x.p[a]!, x.p[b]!) ? y : x));
  return `${pct(rel(w.p[a]!, w.p[b]!))} (s${w.key.split(" ")[0]} ${w.group}, ${w.p[b]} → ${w.p[a]})`;
};
const worse = (rs: Run[], a: string, b: string) => rs.filter((r) => r.p[a]! > r.p[b]!).length;
console.log("");
console.log(
  "| group | runs | mean p99 before / jk / ig2 / llm-d | jk vs before | ig2 vs before | ig2 vs jk | before / jk / ig2 vs llm-d | ig2 worse than before | ig2 worse than jk | jk worse than before | worst ig2 vs before | worst ig2 vs jk | worst ig2 vs llm-d |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
const order = ["burst 8B", "burst-mooncake 8B", "all 8B", "burst MoE", "burst-mooncake MoE", "all MoE", "all"];
for (const g of order.filter((o) => groups.has(o))) {
  const rs = groups.get(g)!;
  const m = (v: string) => mean(rs.map((r) => r.p[v]!)).toFixed(1);
  const mr = (a: string, b: string) => pct(mean(rs.map((r) => rel(r.p[a]!, r.p[b]!))));
  console.log(
    `| ${g} | ${rs.length} | ${m("before")} / ${m("jk")} / ${m("ig2")} / ${m("llmd")} | ${mr("jk", "before")} | ${mr("ig2", "before")} | ${mr("ig2", "jk")} | ${mr("before", "llmd")} / ${mr("jk", "llmd")} / ${mr("ig2", "llmd")} | ${worse(rs, "ig2", "before")} of ${rs.length} | ${worse(rs, "ig2", "jk")} of ${rs.length} | ${worse(rs, "jk", "before")} of ${rs.length} | ${worst(rs, "ig2", "before")} | ${worst(rs, "ig2", "jk")} | ${worst(rs, "ig2", "llmd")} |`,
  );
}
