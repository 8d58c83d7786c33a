// prefix_aware in a folder of simulator reports against the same reports in a reference folder (its
// prefix_aware, and the best peer's p99 there: the peers are not re-run), report by report and grouped
// over seeds. Reads the JSON the simulator writes; nothing typed by hand.
//   npx tsx bench/results/moe-tail/compare.ts after-issue-12 moe-tail-tuning [tuning|scoring]
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const RESULTS = join(dirname(fileURLToPath(import.meta.url)), "..");
const PEERS = ["sglang", "llmd", "dynamo", "sagemaker"];
const [refDir = "after-issue-12", newDir = "moe-tail-tuning", set = "tuning"] = process.argv.slice(2);

interface P {
  policy: string;
  ttftP50Ms: number;
  ttftP99Ms: number;
  hitRate: number;
  maxLoadRatio: number;
}
const read = (dir: string, f: string): P[] =>
  (JSON.parse(readFileSync(join(RESULTS, dir, f), "utf8")) as { policies: P[] }).policies;

const files = readdirSync(join(RESULTS, newDir)).filter((f) => f.endsWith(".json") && f.includes(`-${set}`));
/** Report name without its seed: the group a report belongs to. */
const groupOf = (f: string) => f.replace(/-s\d+(?=[-.])/, "").replace(/\.json$/, "");
const groups = new Map<string, { ref: number[]; now: number[]; peer: number[]; peerName: string[]; p50r: number[]; p50n: number[]; hitR: number[]; hitN: number[]; load: number[] }>();
const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);
const d = (a: number, b: number) => `${a >= b ? "+" : "−"}${Math.abs((a / b - 1) * 100).toFixed(1)}%`;
console.log(`prefix_aware: ${newDir} against ${refDir} (${set} set)\n`);
console.log("| report | p50 before → now | p99 before → now | Δ p99 | best peer p99 (ref) | now vs best peer | hit before → now | maxLoadRatio now |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const f of files.sort()) {
  const ref = read(refDir, f);
  const now = read(newDir, f).find((p) => p.policy === "prefix_aware")!;
  const before = ref.find((p) => p.policy === "prefix_aware")!;
  const peers = ref.filter((p) => PEERS.includes(p.policy)).sort((a, b) => a.ttftP99Ms - b.ttftP99Ms);
  const best = peers[0]!;
  console.log(
    `| ${f.replace(/\.json$/, "")} | ${fmt(before.ttftP50Ms)} → ${fmt(now.ttftP50Ms)} | ${fmt(before.ttftP99Ms)} → ${fmt(now.ttftP99Ms)} | ${d(now.ttftP99Ms, before.ttftP99Ms)} | ${best.policy} ${fmt(best.ttftP99Ms)} | ${d(now.ttftP99Ms, best.ttftP99Ms)} | ${(before.hitRate * 100).toFixed(1)}% → ${(now.hitRate * 100).toFixed(1)}% | ${now.maxLoadRatio.toFixed(2)} |`,
  );
  const g = groups.get(groupOf(f)) ?? { ref: [], now: [], peer: [], peerName: [], p50r: [], p50n: [], hitR: [], hitN: [], load: [] };
  g.ref.push(before.ttftP99Ms);
  g.now.push(now.ttftP99Ms);
  g.p50r.push(before.ttftP50Ms);
  g.p50n.push(now.ttftP50Ms);
  g.hitR.push(before.hitRate);
  g.hitN.push(now.hitRate);
  g.load.push(now.maxLoadRatio);
  // The best peer of a group is the one with the lowest mean p99 over its seeds.
  for (const p of peers) {
    g.peerName.push(p.policy);
    g.peer.push(p.ttftP99Ms);
  }
  groups.set(groupOf(f), g);
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log("\nGrouped over seeds (means):\n");
console.log("| group | p50 before → now | p99 before → now | Δ p99 | best peer (mean p99) | before vs best peer → now vs best peer | hit before → now | worst maxLoadRatio |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const [name, g] of groups) {
  const byPeer = new Map<string, number[]>();
  g.peerName.forEach((p, i) => byPeer.set(p, [...(byPeer.get(p) ?? []), g.peer[i]!]));
  const [peer, p99s] = [...byPeer].sort((a, b) => mean(a[1]) - mean(b[1]))[0]!;
  const best = mean(p99s);
  console.log(
    `| ${name} | ${fmt(mean(g.p50r))} → ${fmt(mean(g.p50n))} | ${fmt(mean(g.ref))} → ${fmt(mean(g.now))} | ${d(mean(g.now), mean(g.ref))} | ${peer} ${fmt(best)} | ${d(mean(g.ref), best)} → ${d(mean(g.now), best)} | ${(mean(g.hitR) * 100).toFixed(1)}% → ${(mean(g.hitN) * 100).toFixed(1)}% | ${Math.max(...g.load).toFixed(2)} |`,
  );
}
