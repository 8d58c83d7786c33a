/**
 * npm run bench:cells-do -- [--cells 1,2,4,8] [--clients-per-cell 16] [--decisions-per-cell 2000] [--runtime workerd|wrangler]
 *
 * Decisions per second with K RouterDO cells driven at once, inside workerd
 * (the real RouterDO class, route + complete over RPC from the do-driver
 * fixture, a fresh stub per decision as the gateway calls it; cost-do.ts).
 * Each cell gets the same callers and decisions, so a perfectly parallel
 * runtime would show K times one cell's rate. Writes
 * bench/results/cells-do.{md,json}, with the workerd process's CPU per
 * decision and its CPU use over the run (cores busy), which say what bounds
 * the rate on this machine.
 */
import { writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { routerDoRates } from "./cost-do";
import { GATEWAY_RUNTIMES, type GatewayRuntime, RUNTIME_DESCRIPTION } from "./gateway";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

function list(raw: string, name: string): number[] {
  const out = raw.split(",").map(Number);
  if (out.some((x) => !Number.isInteger(x) || x < 1))
    throw new Error(`--${name}: positive integers, got ${raw}`);
  return out;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      cells: { type: "string", default: "1,2,4,8" },
      "clients-per-cell": { type: "string", default: "16" },
      "decisions-per-cell": { type: "string", default: "2000" },
      runtime: { type: "string", default: "workerd" },
    },
  });
  const ks = list(values.cells, "cells");
  const [perCellClients] = list(values["clients-per-cell"], "clients-per-cell");
  const [perCellDecisions] = list(values["decisions-per-cell"], "decisions-per-cell");
  const runtime = values.runtime as GatewayRuntime;
  if (!GATEWAY_RUNTIMES.includes(runtime))
    throw new Error(`--runtime: one of ${GATEWAY_RUNTIMES.join(", ")}`);
  const load = loadavg();
  const startedAt = new Date().toISOString();
  const rates = await routerDoRates(
    root,
    ks.map((k) => [perCellClients! * k, perCellDecisions! * k, true, k] as const),
    runtime,
  );
  const one = rates.find((r) => r.cells === 1)?.perSecond;
  const rows = rates.map((r) => {
    const cpuMs = r.workerdCpuMsPerDecision * r.decisions;
    return `| ${r.cells} | ${r.clients} | ${r.decisions} | ${r.ms.toFixed(0)} | ${r.perSecond.toFixed(0)} | ${
      one === undefined ? "–" : (r.perSecond / one).toFixed(2)
    } | ${r.workerdCpuMsPerDecision.toFixed(3)} | ${(cpuMs / r.ms).toFixed(2)} |`;
  });
  const argv = process.argv.slice(2);
  const command = `npm run bench:cells-do${argv.length > 0 ? ` -- ${argv.join(" ")}` : ""}`;
  const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "cpu"}`;
  const md = [
    "# RouterDO cells driven concurrently: decisions/s in workerd",
    "",
    "Reproduce:",
    "",
    "```sh",
    command,
    "```",
    "",
    `${startedAt} on ${machine}, Node ${process.version}; load average at start ${load.map((x) => x.toFixed(2)).join(" / ")} (the machine is shared).`,
    `Served by ${RUNTIME_DESCRIPTION[runtime]}. The fixture Worker bench/e2e/workerd/do-driver.js calls route + complete on the real RouterDO class, a fresh stub per decision (as the gateway does), ${perCellClients} concurrent callers per cell, 16 backends per cell, 8k-token prompts (512 keys).`,
    "",
    "| cells K | callers | decisions | ms | decisions/s | × one cell | workerd CPU ms/decision | cores busy (CPU ms / wall ms) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
  await writeFile(join(root, "bench/results/cells-do.md"), md);
  await writeFile(
    join(root, "bench/results/cells-do.json"),
    `${JSON.stringify({ command, startedAt, machine, loadAverage: load, runtime, rates }, null, 2)}\n`,
  );
  console.log(md);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
});
