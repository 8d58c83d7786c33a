/**
 * Every policy of the same simulator runs under two KV allocations (kvAllocation "reserve" in BASE,
 * "incremental" in NEW: sim/model/scheduler.ts), read from the JSON reports the simulator writes:
 * per run and policy, TTFT p50 / p99 and hit rate under both, the preemptions NEW counted, and
 * prefix_aware's p99 against the best peer (sim-tables.ts PEERS, the lowest p99 of the run) under both.
 * The engine changes, not a policy: every policy is re-run in NEW.
 *
 *   npx tsx bench/kv-allocation-table.ts BASE NEW      (folders under bench/results/)
 */
import { bestPeer, get, type Report, reports } from "./sim-tables";

const ms = (v: number): string => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(1)} ms`);
const pct = (v: number): string => `${(100 * v).toFixed(1)}%`;
const signed = (v: number): string => `${v >= 0 ? "+" : ""}${(100 * v).toFixed(1)}%`;

/** prefix_aware's p99 ÷ the best peer's − 1, and who that peer is. */
function vsBestPeer(r: Report): { delta: number; peer: string } {
  const peer = bestPeer([r]);
  return { delta: get(r, "prefix_aware").ttftP99Ms / get(r, peer).ttftP99Ms - 1, peer };
}

const [base, next] = process.argv.slice(2);
if (base === undefined || next === undefined) {
  process.stderr.write("usage: npx tsx bench/kv-allocation-table.ts BASE NEW\n");
  process.exit(2);
}
const baseByFile = new Map(reports(base).map((r) => [r.file, r]));
for (const b of [...reports(next)].sort((x, y) => (x.file < y.file ? -1 : 1))) {
  const a = baseByFile.get(b.file);
  if (a === undefined) continue;
  const out = [
    `### ${b.file.replace(/\.json$/, "")}`,
    "",
    "| policy | p50 reserve → incremental | p99 reserve → incremental | Δ p99 | hit reserve → incremental | preemptions |",
    "|---|---|---|---|---|---|",
  ];
  for (const p of b.policies) {
    const q = a.policies.find((x) => x.policy === p.policy);
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
