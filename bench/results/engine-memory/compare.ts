// prefix_aware with the scrape on (no second client) in a folder of simulator reports against a baseline
// folder of the same runs (main's policy, same scrape), report by report and grouped over seeds, with the
// best peer's p99 from a third folder (the peers read live engine state, so their runs carry no scrape
// in their names: `-scrape<MS>` is dropped to find them). Reads the JSON the simulator writes.
//   npx tsx bench/results/engine-memory/compare.ts engine-memory-base-tuning engine-memory-tuning after-issue-12 [tuning|scoring]
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const RESULTS = join(dirname(fileURLToPath(import.meta.url)), "..");
const PEERS = ["sglang", "llmd", "dynamo", "sagemaker"];
const [baseDir, newDir, peerDir = "after-issue-12", set = "tuning"] = process.argv.slice(2);
if (baseDir === undefined || newDir === undefined) {
  console.error("usage: compare.ts BASE_FOLDER NEW_FOLDER [PEER_FOLDER] [tuning|scoring]");
  process.exit(2);
}

interface P {
  policy: string;
  ttftP50Ms: number;
  ttftP99Ms: number;
  hitRate: number;
  maxLoadRatio: number;
}
const read = (dir: string, f: string): P[] =>
  (JSON.parse(readFileSync(join(RESULTS, dir, f), "utf8")) as { policies: P[] }).policies;
const ours = (dir: string, f: string) => read(dir, f).find((p) => p.policy === "prefix_aware")!;

const files = readdirSync(join(RESULTS, newDir)).filter((f) => f.endsWith(".json") && f.includes(`-${set}`));
const groupOf = (f: string) => f.replace(/-s\d+(?=[-.])/, "").replace(/\.json$/, "");
const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);
const d = (a: number, b: number) => `${a >= b ? "+" : "−"}${Math.abs((a / b - 1) * 100).toFixed(1)}%`;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
interface G {
  p50b: number[];
  p50n: number[];
  p99b: number[];
  p99n: number[];
  hitB: number[];
  hitN: number[];
  load: number[];
  peers: Map<string, number[]>;
}
const groups = new Map<string, G>();
console.log(`prefix_aware: ${newDir} against ${baseDir}; best peer from ${peerDir} (${set} set)\n`);
console.log("| report | p50 base → now | p99 base → now | Δ p99 | hit base → now | maxLoadRatio base → now |");
console.log("| --- | --- | --- | --- | --- | --- |");
for (const f of files.sort()) {
  const b = ours(baseDir, f);
  const n = ours(newDir, f);
  console.log(
    `| ${f.replace(/\.json$/, "")} | ${fmt(b.ttftP50Ms)} → ${fmt(n.ttftP50Ms)} | ${fmt(b.ttftP99Ms)} → ${fmt(n.ttftP99Ms)} | ${d(n.ttftP99Ms, b.ttftP99Ms)} | ${(b.hitRate * 100).toFixed(1)}% → ${(n.hitRate * 100).toFixed(1)}% | ${b.maxLoadRatio.toFixed(2)} → ${n.maxLoadRatio.toFixed(2)} |`,
  );
  const g: G = groups.get(groupOf(f)) ?? {
    p50b: [],
    p50n: [],
    p99b: [],
    p99n: [],
    hitB: [],
    hitN: [],
    load: [],
    peers: new Map(),
  };
  g.p50b.push(b.ttftP50Ms);
  g.p50n.push(n.ttftP50Ms);
  g.p99b.push(b.ttftP99Ms);
  g.p99n.push(n.ttftP99Ms);
  g.hitB.push(b.hitRate);
  g.hitN.push(n.hitRate);
  g.load.push(n.maxLoadRatio);
  const peerFile = f.replace(/-scrape\d+/, "");
  if (existsSync(join(RESULTS, peerDir, peerFile)))
    for (const p of read(peerDir, peerFile).filter((p) => PEERS.includes(p.policy)))
      g.peers.set(p.policy, [...(g.peers.get(p.policy) ?? []), p.ttftP99Ms]);
  groups.set(groupOf(f), g);
}
console.log("\nGrouped over seeds (means; the best peer is the one with the lowest mean p99):\n");
console.log("| group | p50 base → now | p99 base → now | Δ p99 | best peer | base vs peer → now vs peer | hit base → now | worst maxLoadRatio now |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const [name, g] of groups) {
  const best = [...g.peers].sort((a, b) => mean(a[1]) - mean(b[1]))[0];
  const peer = best === undefined ? "—" : `${best[0]} ${fmt(mean(best[1]))}`;
  const vs =
    best === undefined ? "—" : `${d(mean(g.p99b), mean(best[1]))} → ${d(mean(g.p99n), mean(best[1]))}`;
  console.log(
    `| ${name} | ${fmt(mean(g.p50b))} → ${fmt(mean(g.p50n))} | ${fmt(mean(g.p99b))} → ${fmt(mean(g.p99n))} | ${d(mean(g.p99n), mean(g.p99b))} | ${peer} | ${vs} | ${(mean(g.hitB) * 100).toFixed(1)}% → ${(mean(g.hitN) * 100).toFixed(1)}% | ${Math.max(...g.load).toFixed(2)} |`,
  );
}
