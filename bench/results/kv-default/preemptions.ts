/**
 * Where the engines preempt under NEW's allocation, and where prefix_aware's own figures moved against
 * BASE: per workload, backends and preset of one set, each policy's preemptions summed over the seeds
 * (policies that never preempt left out); then each run whose prefix_aware p99 or hit differs from BASE's.
 *
 *   npx tsx bench/results/kv-default/preemptions.ts BASE NEW scoring|tuning    (folders under bench/results/)
 */
import { get, reports } from "../../sim-tables";

const [baseDir, nextDir, set] = process.argv.slice(2);
if (baseDir === undefined || nextDir === undefined || (set !== "scoring" && set !== "tuning")) {
  process.stderr.write("usage: npx tsx bench/results/kv-default/preemptions.ts BASE NEW scoring|tuning\n");
  process.exit(2);
}
const base = new Map(reports(baseDir).map((r) => [r.file, r]));
const byGroup = new Map<string, Map<string, number>>();
const moved: string[] = [];
let runs = 0;
for (const r of reports(nextDir).filter((x) => x.set?.startsWith(`${set} set`) === true)) {
  runs++;
  const key = `${r.workload} (${r.fleet.backends} backends), ${r.fleet.preset?.startsWith("qwen3") === true ? "MoE" : "8B"}`;
  const m = byGroup.get(key) ?? new Map<string, number>();
  for (const p of r.policies) m.set(p.policy, (m.get(p.policy) ?? 0) + (p.preemptions ?? 0));
  byGroup.set(key, m);
  const a = base.get(r.file);
  if (a === undefined) throw new Error(`${r.file}: not in ${baseDir}/`);
  const [pa, pb] = [get(a, "prefix_aware"), get(r, "prefix_aware")];
  if (pa.ttftP99Ms !== pb.ttftP99Ms || pa.hitRate !== pb.hitRate)
    moved.push(
      `- ${r.file.replace(/\.json$/, "")}: p99 ${pa.ttftP99Ms.toFixed(1)} → ${pb.ttftP99Ms.toFixed(1)} ms, hit ${(100 * pa.hitRate).toFixed(2)}% → ${(100 * pb.hitRate).toFixed(2)}%`,
    );
}
const out = [`Preemptions under ${nextDir}/ (${set} set, ${runs} runs), summed over seeds; groups with none left out:`, ""];
for (const [k, m] of [...byGroup].sort()) {
  const some = [...m].filter(([, n]) => n > 0);
  if (some.length > 0) out.push(`- ${k}: ${some.map(([p, n]) => `${p} ${n}`).join(", ")}`);
}
out.push(
  "",
  `prefix_aware's p99 or hit differs from ${baseDir}/ on ${moved.length} of ${runs} runs (same to the last digit on the rest):`,
  "",
  ...moved,
);
process.stdout.write(`${out.join("\n")}\n`);
