/**
 * What a cells-do run measured, and the figures the report derives from it:
 * total decisions/s over the client's wall clock, workerd CPU per decision
 * per process, cores busy. Pure (no I/O), so the arithmetic is tested.
 */

/** Where the K cells run: all in one workerd process, or one process per cell. */
export type CellsMode = "one-process" | "processes";
export const CELLS_MODES: readonly CellsMode[] = ["one-process", "processes"];

/** One driven workerd process's part of a run. */
export interface ProcessShare {
  readonly decisions: number;
  /** The process's own timing of its decisions (inside the do-driver), ms. */
  readonly ms: number;
  /** utime + stime of the workerd process over the client's run window (/proc, 10 ms ticks). */
  readonly workerdCpuMs: number;
}

export interface CellsRun {
  readonly mode: CellsMode;
  readonly cells: number;
  readonly round: number;
  readonly callers: number;
  /** From the client sending the first /drive to its receiving the last answer. */
  readonly wallMs: number;
  readonly perProcess: readonly ProcessShare[];
  /** CPU of the started workerd processes this run did not drive (should be ~0). */
  readonly idleWorkerdCpuMs: number;
  /** This client's CPU over the run (sending K calls and awaiting them). */
  readonly clientCpuMs: number;
  /** os.loadavg() just before the timed run: 1, 5, 15 min. */
  readonly loadAverage: readonly number[];
}

export interface CellsFigures {
  readonly decisions: number;
  readonly perSecond: number;
  /** Workerd CPU per decision of each driven process, ms (one entry in the one-process layout). */
  readonly cpuMsPerDecision: readonly number[];
  /** All workerd CPU over all decisions, ms. */
  readonly totalCpuMsPerDecision: number;
  /** Workerd CPU ms per wall ms, every started process counted. */
  readonly workerdCores: number;
  readonly clientCores: number;
}

export function figures(run: CellsRun): CellsFigures {
  const decisions = run.perProcess.reduce((s, p) => s + p.decisions, 0);
  const cpu = run.perProcess.reduce((s, p) => s + p.workerdCpuMs, 0);
  return {
    decisions,
    perSecond: (decisions / run.wallMs) * 1000,
    cpuMsPerDecision: run.perProcess.map((p) => p.workerdCpuMs / p.decisions),
    totalCpuMsPerDecision: cpu / decisions,
    workerdCores: (cpu + run.idleWorkerdCpuMs) / run.wallMs,
    clientCores: run.clientCpuMs / run.wallMs,
  };
}

/**
 * The run with the median decisions/s among repeats of one (mode, K) (the lower
 * of the two middle ones for an even count): one real run's figures, all taken
 * together, rather than medians of each column from different runs.
 */
export function medianRun(runs: readonly CellsRun[]): CellsRun {
  if (runs.length === 0) throw new Error("medianRun: no runs");
  const sorted = [...runs].sort((a, b) => figures(a).perSecond - figures(b).perSecond);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

function range(xs: readonly number[], digits: number): string {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return lo.toFixed(digits) === hi.toFixed(digits)
    ? lo.toFixed(digits)
    : `${lo.toFixed(digits)}–${hi.toFixed(digits)}`;
}

export const TABLE_HEADER = [
  "| cells K | workerd processes | callers | decisions | ms | decisions/s (every round) | × one cell | workerd CPU ms/decision (per process) | workerd cores busy | client cores | load avg 1 min |",
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
];

/** One table row per K of one layout: the median round's figures, every round's decisions/s beside it. */
export function tableRows(runs: readonly CellsRun[], mode: CellsMode): string[] {
  const mine = runs.filter((r) => r.mode === mode);
  const ks = [...new Set(mine.map((r) => r.cells))].sort((a, b) => a - b);
  const oneCell = mine.filter((r) => r.cells === 1);
  const base = oneCell.length > 0 ? figures(medianRun(oneCell)).perSecond : undefined;
  return ks.map((k) => {
    const repeats = mine.filter((r) => r.cells === k);
    const m = medianRun(repeats);
    const f = figures(m);
    const every = repeats.map((r) => figures(r).perSecond.toFixed(0)).join(", ");
    return `| ${k} | ${m.perProcess.length} | ${m.callers} | ${f.decisions} | ${m.wallMs.toFixed(0)} | **${f.perSecond.toFixed(0)}** (${every}) | ${
      base === undefined ? "–" : (f.perSecond / base).toFixed(2)
    } | ${range(f.cpuMsPerDecision, 3)} | ${f.workerdCores.toFixed(2)} | ${f.clientCores.toFixed(2)} | ${m.loadAverage[0]?.toFixed(2) ?? "–"} |`;
  });
}

export const PAIRED_HEADER = [
  "| cells K | processes ÷ one process, median | each round |",
  "| --- | --- | --- |",
];

/**
 * Per K, the processes layout's decisions/s over the one-process layout's in the same round: the two
 * runs are adjacent in time, so a change in the shared machine's load falls on both, which the medians
 * of each layout (taken from different rounds) do not ensure. At K = 1 both layouts are one process
 * with one cell, so that row says how far two identical runs differ.
 */
export function pairedRows(runs: readonly CellsRun[]): string[] {
  const ks = [...new Set(runs.map((r) => r.cells))].sort((a, b) => a - b);
  const rows: string[] = [];
  for (const k of ks) {
    const ratios: number[] = [];
    for (const r of runs.filter((x) => x.mode === "processes" && x.cells === k)) {
      const one = runs.find((x) => x.mode === "one-process" && x.cells === k && x.round === r.round);
      if (one !== undefined) ratios.push(figures(r).perSecond / figures(one).perSecond);
    }
    if (ratios.length === 0) continue;
    const sorted = [...ratios].sort((a, b) => a - b);
    const mid = sorted.length / 2;
    const median = sorted.length % 2 === 1 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    rows.push(`| ${k} | **${median.toFixed(2)}** | ${ratios.map((x) => x.toFixed(2)).join(", ")} |`);
  }
  return rows;
}
