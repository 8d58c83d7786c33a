/**
 * Every policy of the same simulator runs under two KV allocations (kvAllocation "reserve" in BASE,
 * "incremental" in NEW: sim/model/scheduler.ts), read from the JSON reports the simulator writes:
 * per run and policy, TTFT p50 / p99 and hit rate under both, the preemptions NEW counted, and
 * prefix_aware's p99 against the best peer (sim-tables.ts PEERS, the lowest p99 of the run) under both.
 * The engine changes, not a policy: every policy is re-run in NEW.
 *
 *   npx tsx bench/kv-allocation-table.ts BASE NEW      (folders under bench/results/)
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DIR, PEERS } from "./sim-tables";

interface PolicyRun {
  readonly policy: string;
  readonly ttftP50Ms: number;
  readonly ttftP99Ms: number;
  readonly hitRate: number;
  readonly preemptions?: number;
}

const load = (folder: string, file: string): PolicyRun[] =>
  (JSON.parse(readFileSync(join(DIR, folder, file), "utf8")) as { policies: PolicyRun[] }).policies;

const ms = (v: number): string => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(1)} ms`);
const pct = (v: number): string => `${(100 * v).toFixed(1)}%`;
const signed = (v: number): string => `${v >= 0 ? "+" : ""}${(100 * v).toFixed(1)}%`;

/** prefix_aware's p99 ÷ the best peer's − 1, and who that peer is. */
function vsBestPeer(runs: readonly PolicyRun[]): { delta: number; peer: string } {
  const ours = runs.find((p) => p.policy === "prefix_aware")!;
  const peers = runs.filter((p) => PEERS.includes(p.policy));
  const best = peers.reduce((a, b) => (b.ttftP99Ms < a.ttftP99Ms ? b : a));
  return { delta: ours.ttftP99Ms / best.ttftP99Ms - 1, peer: best.policy };
}

const [base, next] = process.argv.slice(2);
if (base === undefined || next === undefined) {
  process.stderr.write("usage: npx tsx bench/kv-allocation-table.ts BASE NEW\n");
  process.exit(2);
}
for (const file of readdirSync(join(DIR, next))
  .filter((f) => f.endsWith(".json"))
  .sort()) {
  if (!existsSync(join(DIR, base, file))) continue;
  const a = load(base, file);
  const b = load(next, file);
  const out = [
    `### ${file.replace(/\.json$/, "")}`,
    "",
    "| policy | p50 reserve → incremental | p99 reserve → incremental | Δ p99 | hit reserve → incremental | preemptions |",
    "|---|---|---|---|---|---|",
  ];
  for (const p of b) {
    const q = a.find((x) => x.policy === p.policy);
    if (q === undefined) continue;
    out.push(
      `| ${p.policy} | ${ms(q.ttftP50Ms)} → ${ms(p.ttftP50Ms)} | ${ms(q.ttftP99Ms)} → ${ms(p.ttftP99Ms)} | ${signed(p.ttftP99Ms / q.ttftP99Ms - 1)} | ${pct(q.hitRate)} → ${pct(p.hitRate)} | ${p.preemptions ?? "–"} |`,
    );
  }
  const ra = vsBestPeer(a);
  const rb = vsBestPeer(b);
  out.push(
    "",
    `prefix_aware p99 vs best peer: reserve ${signed(ra.delta)} (${ra.peer}), incremental ${signed(rb.delta)} (${rb.peer}).`,
    "",
  );
  process.stdout.write(`${out.join("\n")}\n`);
}
