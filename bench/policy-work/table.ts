/**
 * The table of bench/results/policy-work.md, from the JSON reports that
 * matrix.sh wrote: per run, prefix_aware against the best peer router
 * (sglang, llmd, dynamo, sagemaker) on TTFT p99, its hit rate against the
 * pooled oracle, its maxLoadRatio, and on no-shared-prefix its p99 against
 * least_outstanding's; then each target of issue 12, met or missed.
 *
 *   npx tsx bench/policy-work/table.ts --runs DIR [--ours DIR] [--base DIR] [--json FILE]
 *
 * --runs: a matrix run with every policy. --ours: prefix_aware from another
 * run of the same commands (a variant), read in place of --runs' own.
 * --base: the same commands run by another tree's prefix_aware (main's), shown beside.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

interface PolicyFigures {
  readonly policy: string;
  readonly hitRate: number;
  readonly ttftP50Ms: number;
  readonly ttftP99Ms: number;
  readonly maxLoadRatio: number;
  readonly reasons: Readonly<Record<string, number>>;
}

interface Report {
  readonly command: string;
  readonly set: string;
  readonly workload: string;
  readonly fleet: { readonly backends: number; readonly seed: number; readonly preset: string };
  readonly oracle: { readonly hitRate: number };
  readonly policies: readonly PolicyFigures[];
}

const PEERS = ["sglang", "llmd", "dynamo", "sagemaker"];

function reports(dir: string): Map<string, Report> {
  const out = new Map<string, Report>();
  for (const f of readdirSync(dir).sort())
    if (f.endsWith(".json"))
      out.set(f.replace(/\.json$/, ""), JSON.parse(readFileSync(join(dir, f), "utf8")));
  return out;
}

function figures(r: Report | undefined, policy: string): PolicyFigures | undefined {
  return r?.policies.find((p) => p.policy === policy);
}

export interface Row {
  readonly run: string;
  readonly preset: string;
  readonly workload: string;
  readonly backends: number;
  readonly seed: number;
  readonly sharing: boolean;
  readonly ours: PolicyFigures;
  readonly base?: PolicyFigures;
  readonly bestPeer: PolicyFigures;
  readonly leastOutstanding?: PolicyFigures;
  readonly oracleHitRate: number;
  /** (ours − best peer) / best peer, on TTFT p99: negative = ours faster. */
  readonly vsPeer: number;
  readonly hitOfOracle: number;
  readonly command: string;
}

function rowsOf(runs: Map<string, Report>, ours: Map<string, Report>, base: Map<string, Report>): Row[] {
  const rows: Row[] = [];
  for (const [name, r] of runs) {
    const mine = figures(ours.get(name) ?? r, "prefix_aware");
    const peers = PEERS.map((p) => figures(r, p)).filter((p): p is PolicyFigures => p !== undefined);
    if (mine === undefined || peers.length === 0) continue;
    const best = peers.reduce((a, b) => (b.ttftP99Ms < a.ttftP99Ms ? b : a));
    const baseFig = figures(base.get(name), "prefix_aware");
    const lo = figures(r, "least_outstanding");
    rows.push({
      run: name,
      preset: r.fleet.preset,
      workload: r.workload.replace(/ \[.*$/, ""),
      backends: r.fleet.backends,
      seed: r.fleet.seed,
      sharing: !r.workload.startsWith("no-shared-prefix"),
      ours: mine,
      ...(baseFig !== undefined ? { base: baseFig } : {}),
      bestPeer: best,
      ...(lo !== undefined ? { leastOutstanding: lo } : {}),
      oracleHitRate: r.oracle.hitRate,
      vsPeer: (mine.ttftP99Ms - best.ttftP99Ms) / best.ttftP99Ms,
      hitOfOracle: r.oracle.hitRate > 0 ? mine.hitRate / r.oracle.hitRate : Number.NaN,
      command: r.command,
    });
  }
  return rows;
}

const ms = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`);
const pct = (x: number, d = 1) => `${(100 * x).toFixed(d)}%`;
const signed = (x: number) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)}%`;

function markdown(rows: readonly Row[]): string {
  const head = [
    "preset",
    "workload",
    "N",
    "seed",
    "prefix_aware p99",
    ...(rows.some((r) => r.base) ? ["main's p99"] : []),
    "best peer p99",
    "vs best peer",
    "hit / oracle",
    "maxLoadRatio",
    "LO p99",
  ];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const r of rows) {
    const cells = [
      r.preset.replace(/-h100-vllm$/, ""),
      r.workload,
      String(r.backends),
      r.workload === "mooncake" ? "-" : String(r.seed),
      ms(r.ours.ttftP99Ms),
      ...(rows.some((x) => x.base) ? [r.base ? ms(r.base.ttftP99Ms) : "-"] : []),
      `${ms(r.bestPeer.ttftP99Ms)} (${r.bestPeer.policy})`,
      signed(r.vsPeer),
      r.sharing ? `${pct(r.ours.hitRate)} / ${pct(r.oracleHitRate)} = ${pct(r.hitOfOracle, 0)}` : "-",
      r.ours.maxLoadRatio.toFixed(2),
      r.leastOutstanding ? ms(r.leastOutstanding.ttftP99Ms) : "-",
    ];
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

/** Each target of issue 12 that items 1, 3, 4 carry, over the rows. */
function targets(rows: readonly Row[]): string {
  const better = rows.filter((r) => r.vsPeer <= -0.1).length;
  const worst = rows.reduce((a, b) => (b.vsPeer > a.vsPeer ? b : a));
  const sharing = rows.filter((r) => r.sharing);
  const lowHit = sharing.reduce((a, b) => (b.hitOfOracle < a.hitOfOracle ? b : a));
  const nsp = rows.filter((r) => !r.sharing && r.leastOutstanding);
  const nspWorst = nsp.reduce<Row | undefined>(
    (a, b) =>
      a === undefined ||
      b.ours.ttftP99Ms / b.leastOutstanding!.ttftP99Ms > a.ours.ttftP99Ms / a.leastOutstanding!.ttftP99Ms
        ? b
        : a,
    undefined,
  );
  const maxLoad = rows.reduce((a, b) => (b.ours.maxLoadRatio > a.ours.maxLoadRatio ? b : a));
  const out = [
    `- p99 ≥ 10% better than the best peer: ${better} of ${rows.length} runs (target: at least half).`,
    `- never more than 3% worse: worst ${signed(worst.vsPeer)} (${worst.run}).`,
    `- hit ≥ 90% of oracle on sharing runs: lowest ${pct(lowHit.hitOfOracle, 0)} (${lowHit.run}).`,
  ];
  if (nspWorst !== undefined)
    out.push(
      `- no-sharing p99 within 2% of least_outstanding: worst ${signed(nspWorst.ours.ttftP99Ms / nspWorst.leastOutstanding!.ttftP99Ms - 1)} (${nspWorst.run}).`,
    );
  out.push(`- maxLoadRatio ≤ 1.3: highest ${maxLoad.ours.maxLoadRatio.toFixed(2)} (${maxLoad.run}).`);
  return out.join("\n");
}

function main(): void {
  const { values } = parseArgs({
    options: {
      runs: { type: "string" },
      ours: { type: "string" },
      base: { type: "string" },
      json: { type: "string" },
    },
  });
  if (values.runs === undefined) throw new Error("--runs DIR is required");
  const rows = rowsOf(
    reports(values.runs),
    values.ours === undefined ? new Map() : reports(values.ours),
    values.base === undefined ? new Map() : reports(values.base),
  );
  console.log(markdown(rows));
  console.log("");
  console.log(targets(rows));
  if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(rows, null, 2)}\n`);
}

main();
