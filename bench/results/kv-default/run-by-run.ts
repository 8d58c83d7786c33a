/**
 * The same race under two KV allocations, run by run: reserve (BASE, the engine model's default before
 * branch kv-default) against incremental (NEW, vLLM V1's allocation, the default since). Per report of one
 * set: prefix_aware's p99, the best peer (sim-tables.ts PEERS, lowest p99 of that run) and its p99,
 * prefix_aware's Δ against it, its hit as a share of the oracle's, and NEW's preemptions (ours, then the
 * peers' fewest–most). Then every policy's preemptions summed over the set. Read from the reports' JSON.
 *
 *   npx tsx bench/results/kv-default/run-by-run.ts BASE NEW scoring|tuning    (folders under bench/results/)
 */
import { bestPeer, get, PEERS, type Report, reports } from "../../sim-tables";

const [base, next, set] = process.argv.slice(2);
if (base === undefined || next === undefined || (set !== "scoring" && set !== "tuning")) {
  process.stderr.write("usage: npx tsx bench/results/kv-default/run-by-run.ts BASE NEW scoring|tuning\n");
  process.exit(2);
}

const ms = (v: number): string => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(1)} ms`);
const signed = (v: number): string =>
  Math.abs(v) < 0.0005 ? "±0.0%" : `${v >= 0 ? "+" : "−"}${Math.abs(100 * v).toFixed(1)}%`;
const ofOracle = (r: Report): string => {
  const x = get(r, "prefix_aware").hitRate / r.oracle.hitRate;
  return Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : "–";
};
const inSet = (r: Report): boolean => r.set?.startsWith(`${set} set`) === true;
const name = (r: Report): string => r.file.replace(/\.json$/, "").replace("qwen3-30b-a3b-h100-vllm", "MoE");

const baseByFile = new Map(reports(base).map((r) => [r.file, r]));
const runs = reports(next)
  .filter(inSet)
  .sort((x, y) => (x.file < y.file ? -1 : 1));
const out = [
  `Reserve (${base}/) → incremental (${next}/), ${set} set, run by run:`,
  "",
  "| run | prefix_aware p99 | best peer p99 | Δ vs best peer | hit of oracle | preemptions: ours / peers |",
  "| --- | --- | --- | --- | --- | --- |",
];
const totals = new Map<string, number>();
let compared = 0;
let identical = 0;
for (const b of runs) {
  const a = baseByFile.get(b.file);
  if (a === undefined) throw new Error(`${b.file}: not in ${base}/`);
  compared++;
  if (b.policies.every((p) => get(a, p.policy).ttftP99Ms === p.ttftP99Ms)) identical++;
  for (const p of b.policies) totals.set(p.policy, (totals.get(p.policy) ?? 0) + (p.preemptions ?? 0));
  const [pa, pb] = [bestPeer([a]), bestPeer([b])];
  const ours = (r: Report) => get(r, "prefix_aware").ttftP99Ms;
  const peers = PEERS.map((p) => get(b, p).preemptions ?? 0);
  out.push(
    `| ${name(b)} | ${ms(ours(a))} → ${ms(ours(b))} | ${pa} ${ms(get(a, pa).ttftP99Ms)} → ${pb} ${ms(get(b, pb).ttftP99Ms)} | ${signed(ours(a) / get(a, pa).ttftP99Ms - 1)} → ${signed(ours(b) / get(b, pb).ttftP99Ms - 1)} | ${ofOracle(a)} → ${ofOracle(b)} | ${get(b, "prefix_aware").preemptions ?? "–"} / ${Math.min(...peers)}–${Math.max(...peers)} |`,
  );
}
out.push(
  "",
  `${compared} runs; ${identical} with every policy's p99 the same under both allocations.`,
  "",
  `Preemptions summed over the ${set} set's ${compared} runs (incremental): ${[...totals].map(([p, n]) => `${p} ${n}`).join(", ")}.`,
);
process.stdout.write(`${out.join("\n")}\n`);
