// Summarises pair.ts lines (stdin or the files named): per group (workload, backends, load, preset) and tie
// tolerance, main's policy (off) against return-aware (on): mean p99 over the seeds, its change, the per-seed
// changes' range, the mean hit rate (points) and how many seeds got better/worse.
//   npx tsx bench/results/return-aware/pair-summary.ts bench/results/return-aware/gate2-mooncake.jsonl
import { readFileSync } from "node:fs";

interface Line {
  workload: string;
  backends: number;
  load: number;
  set: string;
  seed: number;
  preset: string;
  tie: number;
  returnAware: boolean;
  ttftP99Ms: number;
  hitRate: number;
}
const files = process.argv.slice(2);
const text = files.length > 0 ? files.map((f) => readFileSync(f, "utf8")).join("\n") : readFileSync(0, "utf8");
const lines: Line[] = text
  .split("\n")
  .filter((l) => l.trim().startsWith("{"))
  .map((l) => JSON.parse(l) as Line);
const groups = new Map<string, Map<number, { off?: Line; on?: Line }>>();
for (const l of lines) {
  const g = `${l.workload} ${l.backends}b ×${l.load} ${l.preset} ${l.set} tie ${l.tie}`;
  const bySeed = groups.get(g) ?? new Map();
  groups.set(g, bySeed);
  const p = bySeed.get(l.seed) ?? {};
  bySeed.set(l.seed, p);
  if (l.returnAware) p.on = l;
  else p.off = l;
}
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const pct = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x * 100).toFixed(1)}%`;
console.log("| group | seeds | p99 off → on (mean) | Δ | per-seed Δ range | on better / worse | hit off → on (mean) |");
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const [g, bySeed] of groups) {
  const pairs = [...bySeed.values()].filter((p) => p.off && p.on) as { off: Line; on: Line }[];
  if (pairs.length === 0) continue;
  const off = mean(pairs.map((p) => p.off.ttftP99Ms));
  const on = mean(pairs.map((p) => p.on.ttftP99Ms));
  const ds = pairs.map((p) => p.on.ttftP99Ms / p.off.ttftP99Ms - 1);
  const better = ds.filter((d) => d < 0).length;
  const worse = ds.filter((d) => d > 0).length;
  const hOff = mean(pairs.map((p) => p.off.hitRate));
  const hOn = mean(pairs.map((p) => p.on.hitRate));
  console.log(
    `| ${g} | ${pairs.length} | ${(off / 1000).toFixed(3)} s → ${(on / 1000).toFixed(3)} s | ${pct(on / off - 1)} | ${pct(Math.min(...ds))} … ${pct(Math.max(...ds))} | ${better} / ${worse} | ${(hOff * 100).toFixed(2)}% → ${(hOn * 100).toFixed(2)}% |`,
  );
}
