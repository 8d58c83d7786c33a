/**
 * npm run bench:cells-do -- [--mode both|one-process|processes] [--cells 1,2,4,8] [--rounds 5]
 *                          [--clients-per-cell 16] [--decisions-per-cell 2000] [--runtime workerd|wrangler]
 *
 * Decisions per second with K RouterDO cells driven at once, inside workerd
 * (the real RouterDO class, route + complete over RPC from the do-driver
 * fixture, a fresh stub per decision as the gateway calls it), in two
 * layouts (cells-do-run.ts): every cell in one workerd process, or each cell
 * in a workerd process of its own. Each cell gets the same callers and
 * decisions, so a perfectly parallel runtime would show K times one cell's
 * rate. Rounds interleave the layouts and K, so a change in the shared
 * machine's load falls on all of them. Writes bench/results/cells-do.{md,json}.
 */
import { writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { reproduceLines } from "../../sim/format";
import { runCells, startCellsRig } from "./cells-do-run";
import {
  CELLS_MODES,
  type CellsMode,
  type CellsRun,
  PAIRED_HEADER,
  pairedRows,
  TABLE_HEADER,
  tableRows,
} from "./cells-do-summary";
import { frozenDoDriver } from "./do-driver-bundle";
import { GATEWAY_RUNTIMES, type GatewayRuntime, RUNTIME_DESCRIPTION } from "./gateway";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

function list(raw: string, name: string): number[] {
  const out = raw.split(",").map(Number);
  if (out.some((x) => !Number.isInteger(x) || x < 1))
    throw new Error(`--${name}: positive integers, got ${raw}`);
  return out;
}

const LAYOUT_TITLE: Readonly<Record<CellsMode, string>> = {
  "one-process": "Every cell in one workerd process",
  processes: "Each cell in its own workerd process",
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      mode: { type: "string", default: "both" },
      cells: { type: "string", default: "1,2,4,8" },
      rounds: { type: "string", default: "5" },
      "clients-per-cell": { type: "string", default: "16" },
      "decisions-per-cell": { type: "string", default: "2000" },
      runtime: { type: "string", default: "workerd" },
    },
  });
  const ks = list(values.cells, "cells");
  const [rounds] = list(values.rounds, "rounds");
  const [perCellClients] = list(values["clients-per-cell"], "clients-per-cell");
  const [perCellDecisions] = list(values["decisions-per-cell"], "decisions-per-cell");
  const runtime = values.runtime as GatewayRuntime;
  if (!GATEWAY_RUNTIMES.includes(runtime))
    throw new Error(`--runtime: one of ${GATEWAY_RUNTIMES.join(", ")}`);
  const modes: readonly CellsMode[] =
    values.mode === "both" ? CELLS_MODES : CELLS_MODES.filter((m) => m === values.mode);
  if (modes.length === 0) throw new Error(`--mode: both or one of ${CELLS_MODES.join(", ")}`);

  const loadAtStart = loadavg();
  const startedAt = new Date().toISOString();
  const bundle = await frozenDoDriver(root);
  const runs: CellsRun[] = [];
  try {
    const rig = await startCellsRig(bundle.configPath, root, modes, Math.max(...ks), runtime);
    try {
      for (let round = 1; round <= rounds!; round++)
        for (const k of ks)
          for (const mode of modes) {
            const run = await runCells(rig, mode, k, perCellClients!, perCellDecisions!, round);
            runs.push(run);
            process.stderr.write(
              `round ${round} ${mode} K=${k}: ${run.perProcess.reduce((s, p) => s + p.decisions, 0)} decisions in ${run.wallMs.toFixed(0)} ms\n`,
            );
          }
    } finally {
      await rig.close();
    }
  } finally {
    await bundle.dispose();
  }
  const loadAtEnd = loadavg();

  const argv = process.argv.slice(2);
  const command = `npm run bench:cells-do${argv.length > 0 ? ` -- ${argv.join(" ")}` : ""}`;
  const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "cpu"}`;
  const fmtLoad = (l: readonly number[]) => l.map((x) => x.toFixed(2)).join(" / ");
  const md = [
    "# RouterDO cells driven concurrently: decisions/s in workerd",
    "",
    ...reproduceLines(command, "sh"),
    `${startedAt} on ${machine}, Node ${process.version}; load average (1 / 5 / 15 min) ${fmtLoad(loadAtStart)} at start, ${fmtLoad(loadAtEnd)} at end (the machine is shared; each row's 1-min load is the one just before its run, and counts this bench's own processes of the runs before it).`,
    `Served by ${RUNTIME_DESCRIPTION[runtime]}, one frozen bundle of the fixture Worker bench/e2e/workerd/do-driver.js for every process; it calls route + complete on the real RouterDO class, a fresh stub per decision (as the gateway does), ${perCellClients} concurrent callers per cell, ${perCellDecisions} decisions per cell, 16 backends per cell, 8k-token prompts (512 keys).`,
    `${rounds} rounds, the layouts and K interleaved within each; a row is the round with the median decisions/s (all rounds' in brackets). decisions/s: all decisions over the client's wall clock (first call sent to last answer). CPU: each workerd process's utime + stime from /proc over that window (caller Worker and RouterDO together, as in one process); cores busy: all workerd processes' CPU ms per wall ms; client: this Node process's CPU per wall ms.`,
    "",
    ...modes.flatMap((mode) => [
      `## ${LAYOUT_TITLE[mode]}`,
      "",
      ...TABLE_HEADER,
      ...tableRows(runs, mode),
      "",
    ]),
    ...(modes.length === CELLS_MODES.length
      ? [
          "## The two layouts side by side, round by round",
          "",
          "Each round runs the two layouts back to back at each K, so their ratio is the least touched by the shared machine's changing load.",
          "",
          ...PAIRED_HEADER,
          ...pairedRows(runs),
          "",
        ]
      : []),
  ].join("\n");
  await writeFile(join(root, "bench/results/cells-do.md"), md);
  await writeFile(
    join(root, "bench/results/cells-do.json"),
    `${JSON.stringify({ command, startedAt, machine, loadAtStart, loadAtEnd, runtime, perCellClients, perCellDecisions, runs }, null, 2)}\n`,
  );
  console.log(md);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
});
