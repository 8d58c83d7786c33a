/**
 * prefix_aware in two folders of simulator reports (BASE, then NEW: the same runs with a changed policy),
 * report by report and grouped over seeds, read from the JSON the simulator writes (never typed by
 * hand). Replaces the per-branch compare scripts once kept under bench/results/.
 *
 *   npx tsx bench/compare-folders.ts BASE NEW [--set tuning|scoring] [--peers FOLDER] [--reports] [--groups]
 *
 * Folders are under bench/results/. Only reports present in both are compared (those of NEW missing
 * from BASE are named on stderr); `--set` keeps the reports whose file name says that set (`-tuning`,
 * `-scoring`), all of them when not given. `--reports` prints the table per report, `--groups` the
 * table per group (a report's name without its `-s<seed>`: one workload, backend count, preset and set,
 * the seeds averaged, with Δ p99 per seed in brackets); both when neither is given.
 *
 * Columns: p50 and p99 TTFT, Δ p99 (NEW's ÷ BASE's − 1), hit rate and its share of the pooled oracle
 * ("–" where the oracle hits nothing), e2e p99 ("–" in reports without it), maxLoadRatio (a group's: the
 * worst seed). `--peers FOLDER` adds the best peer's p99 from FOLDER's reports of the same runs (the peers
 * are not re-run): the peer with the lowest p99 in a report, and in a group the one with the lowest mean
 * p99 over its seeds; BASE's and NEW's p99 against it. The peers read live engine state, so a report's
 * `-scrape<MS>` is dropped from its name to find theirs; a report with no peer report counts for none.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { mean } from "../sim/stats";
import { DIR, get, PEERS, type Report, reports } from "./sim-tables";

/** prefix_aware's figures in one report. */
export interface Figures {
  readonly p50: number;
  readonly p99: number;
  readonly hit: number;
  /** hit ÷ the pooled oracle's; NaN where the oracle hits nothing. */
  readonly ofOracle: number;
  /** NaN in a report written before e2e latency was measured. */
  readonly e2eP99: number;
  readonly load: number;
}

/** One report present in both folders, and the peers' p99 of the same run (policy → ms; may be empty). */
export interface Row {
  readonly name: string;
  readonly base: Figures;
  readonly now: Figures;
  readonly peers: ReadonlyMap<string, number>;
}

export function figures(r: Report): Figures {
  const p = get(r, "prefix_aware");
  return {
    p50: p.ttftP50Ms,
    p99: p.ttftP99Ms,
    hit: p.hitRate,
    ofOracle: r.oracle.hitRate > 0 ? p.hitRate / r.oracle.hitRate : Number.NaN,
    e2eP99: p.e2eP99Ms ?? Number.NaN,
    load: p.maxLoadRatio,
  };
}

/** A report's group: its file name without the seed (`-s<N>` before a dash or the extension). */
export const groupOf = (file: string) => file.replace(/-s\d+(?=[-.])/, "").replace(/\.json$/, "");

/** The peers' report of a run: its file name without `-scrape<MS>` (the peers read no scrape). */
export const peerFileOf = (file: string) => file.replace(/-scrape\d+/, "");

/** The peers' p99 in one report (policy → ms), the peers it ran only. */
export function peerP99s(r: Report): Map<string, number> {
  return new Map(r.policies.filter((p) => PEERS.includes(p.policy)).map((p) => [p.policy, p.ttftP99Ms]));
}

/**
 * The best peer over some reports: the one with the lowest mean p99 over the reports it ran in (one
 * report: its lowest p99); undefined when no report has a peer. Ties go to the peer met first.
 */
export function bestPeer(
  rows: readonly { readonly peers: ReadonlyMap<string, number> }[],
): { readonly peer: string; readonly p99: number } | undefined {
  const byPeer = new Map<string, number[]>();
  for (const r of rows) for (const [p, ms] of r.peers) byPeer.set(p, [...(byPeer.get(p) ?? []), ms]);
  let best: { peer: string; p99: number } | undefined;
  for (const [peer, p99s] of byPeer)
    if (best === undefined || mean(p99s) < best.p99) best = { peer, p99: mean(p99s) };
  return best;
}

/** Rows grouped over seeds, groups in the order of their first row (rows come sorted by name). */
export function groups<R extends { readonly name: string }>(rows: readonly R[]): Map<string, R[]> {
  const out = new Map<string, R[]>();
  for (const r of rows) out.set(groupOf(r.name), [...(out.get(groupOf(r.name)) ?? []), r]);
  return out;
}

const ms = (x: number) =>
  Number.isNaN(x) ? "–" : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(1)} ms`;
const pct = (x: number) => (Number.isNaN(x) ? "–" : `${(100 * x).toFixed(1)}%`);
/** now ÷ base − 1, signed. */
const delta = (now: number, base: number) =>
  Number.isNaN(now / base)
    ? "–"
    : `${now >= base ? "+" : "−"}${Math.abs(100 * (now / base - 1)).toFixed(1)}%`;
const row = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
const rule = (n: number) => row(Array.from({ length: n }, () => "---"));

/** Means of each figure over some reports (maxLoadRatio: the worst). */
function over(fs: readonly Figures[]): Figures {
  const m = (k: keyof Figures) => mean(fs.map((f) => f[k]));
  return {
    p50: m("p50"),
    p99: m("p99"),
    hit: m("hit"),
    ofOracle: m("ofOracle"),
    e2eP99: m("e2eP99"),
    load: Math.max(...fs.map((f) => f.load)),
  };
}

function cells(b: Figures, n: Figures, deltaCell: string, best: ReturnType<typeof bestPeer> | "off") {
  const out = [
    `${ms(b.p50)} → ${ms(n.p50)}`,
    `${ms(b.p99)} → ${ms(n.p99)}`,
    deltaCell,
    `${pct(b.hit)} (${pct(b.ofOracle)}) → ${pct(n.hit)} (${pct(n.ofOracle)})`,
    `${ms(b.e2eP99)} → ${ms(n.e2eP99)} (${delta(n.e2eP99, b.e2eP99)})`,
    `${b.load.toFixed(2)} → ${n.load.toFixed(2)}`,
  ];
  if (best !== "off")
    out.push(
      best === undefined ? "–" : `${best.peer} ${ms(best.p99)}`,
      best === undefined ? "–" : `${delta(b.p99, best.p99)} → ${delta(n.p99, best.p99)}`,
    );
  return out;
}

const HEAD = [
  "p50 base → new",
  "p99 base → new",
  "Δ p99",
  "hit (of oracle) base → new",
  "e2e p99 base → new (Δ)",
];

/** The per-report table. */
export function reportTable(rows: readonly Row[], withPeers: boolean): string {
  const head = ["report", ...HEAD, "maxLoadRatio base → new"];
  if (withPeers) head.push("best peer p99", "base vs peer → new vs peer");
  const out = [row(head), rule(head.length)];
  for (const r of rows)
    out.push(
      row([
        r.name.replace(/\.json$/, ""),
        ...cells(r.base, r.now, delta(r.now.p99, r.base.p99), withPeers ? bestPeer([r]) : "off"),
      ]),
    );
  return out.join("\n");
}

/** The table grouped over seeds. */
export function groupTable(rows: readonly Row[], withPeers: boolean): string {
  const head = ["group (seeds)", ...HEAD, "worst maxLoadRatio base → new"];
  if (withPeers) head.push("best peer (mean p99)", "base vs peer → new vs peer");
  const out = [row(head), rule(head.length)];
  for (const [name, rs] of groups(rows)) {
    const b = over(rs.map((r) => r.base));
    const n = over(rs.map((r) => r.now));
    const perSeed = rs.length > 1 ? ` [${rs.map((r) => delta(r.now.p99, r.base.p99)).join(", ")}]` : "";
    out.push(
      row([
        `${name} (${rs.length})`,
        ...cells(b, n, `${delta(n.p99, b.p99)}${perSeed}`, withPeers ? bestPeer(rs) : "off"),
      ]),
    );
  }
  return out.join("\n");
}

/** The reports of NEW also in BASE (of one set when given), sorted by name, and NEW's others. */
export function rowsOf(
  baseFolder: string,
  newFolder: string,
  set?: string,
  peerFolder?: string,
): { rows: Row[]; missing: string[] } {
  const base = new Map(reports(baseFolder).map((r) => [r.file, r]));
  const peers = peerFolder === undefined ? undefined : new Map(reports(peerFolder).map((r) => [r.file, r]));
  const rows: Row[] = [];
  const missing: string[] = [];
  const now = reports(newFolder)
    .filter((r) => set === undefined || r.file.includes(`-${set}`))
    .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  for (const r of now) {
    const b = base.get(r.file);
    if (b === undefined) {
      missing.push(r.file);
      continue;
    }
    const p = peers?.get(peerFileOf(r.file));
    rows.push({
      name: r.file,
      base: figures(b),
      now: figures(r),
      peers: p === undefined ? new Map() : peerP99s(p),
    });
  }
  return { rows, missing };
}

const USAGE =
  "usage: npx tsx bench/compare-folders.ts BASE NEW [--set tuning|scoring] [--peers FOLDER] [--reports] [--groups]";

function main(argv: readonly string[]): void {
  const folders: string[] = [];
  let set: string | undefined;
  let peerFolder: string | undefined;
  let perReport = false;
  let perGroup = false;
  let badFlag = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--set") set = argv[++i];
    else if (a === "--peers") peerFolder = argv[++i];
    else if (a === "--reports") perReport = true;
    else if (a === "--groups") perGroup = true;
    else if (a.startsWith("--")) badFlag = true;
    else folders.push(a);
  }
  const [baseFolder, newFolder] = folders;
  const badSet = set !== undefined && set !== "tuning" && set !== "scoring";
  const unknown = [baseFolder, newFolder, peerFolder].some(
    (f) => f !== undefined && !existsSync(join(DIR, f)),
  );
  if (
    folders.length !== 2 ||
    baseFolder === undefined ||
    newFolder === undefined ||
    badSet ||
    badFlag ||
    unknown
  ) {
    console.error(USAGE);
    process.exitCode = 2;
    return;
  }
  if (!perReport && !perGroup) perReport = perGroup = true;
  const { rows, missing } = rowsOf(baseFolder, newFolder, set, peerFolder);
  if (missing.length > 0) console.error(`not in ${baseFolder}, not compared: ${missing.join(", ")}`);
  const withPeers = peerFolder !== undefined;
  const out = [
    `prefix_aware: ${newFolder} against ${baseFolder}${withPeers ? `; best peer from ${peerFolder}` : ""} (${set ?? "every"} set)`,
  ];
  if (perReport) out.push("", reportTable(rows, withPeers));
  if (perGroup) out.push("", "Grouped over seeds (means):", "", groupTable(rows, withPeers));
  console.log(out.join("\n"));
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1])
  main(process.argv.slice(2));
