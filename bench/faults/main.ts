/**
 * `npm run bench:faults`: the fault soak (default) or the fault table
 * (`--table`) through the real gateway bundle in workerd; writes
 * bench/results/faults.{md,json} and exits non-zero when the soak misses a
 * pass criterion.
 */

import { failure, HelpRequested, UsageError } from "../../sim/flags";
import { bundleWorker } from "../e2e/gateway";
import { parseFaultsArgs, USAGE } from "./args";
import { provenance } from "./provenance";
import { writeFaultsReport } from "./report";
import { runSoak } from "./soak";
import { runTable, selectScenarios } from "./table";

/** The reports name the cells only when the pool was split, so a one-RouterDO run writes what it always did. */
const cellsField = (cells: number) => (cells > 1 ? { cells } : {});

async function main(argv: readonly string[]): Promise<number> {
  const a = parseFaultsArgs(argv);
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const command = `npm run bench:faults --${argv.length > 0 ? ` ${argv.join(" ")}` : ""}`.replace(/ --$/, "");
  const prov = provenance(command);
  const scenarios = a.table ? selectScenarios(a.only) : [];
  const bundle = await bundleWorker();
  try {
    if (a.table) {
      const results = await runTable(scenarios, {
        configPath: bundle.configPath,
        baselineMs: a.baselineS * 1000,
        tailMs: 5000,
        log,
        cells: a.cells,
      });
      await writeFaultsReport(a.out, {
        table: { provenance: prov, baselineS: a.baselineS, results, ...cellsField(a.cells) },
      });
      log(`wrote ${a.out}.{md,json}`);
      return results.some((r) => r.error !== undefined) ? 1 : 0;
    }
    log(`soak: ${a.soak.durationS} s, ${a.soak.clients} clients, ${a.cells} RouterDO cell(s)`);
    const result = await runSoak(a.soak, bundle.configPath, log, a.cells);
    await writeFaultsReport(a.out, { soak: { provenance: prov, result, ...cellsField(a.cells) } });
    for (const c of result.verdict.criteria) log(`${c.pass ? "pass" : "FAIL"}  ${c.name}: ${c.detail}`);
    log(`soak ${result.verdict.pass ? "PASSED" : "FAILED"}; wrote ${a.out}.{md,json}`);
    return result.verdict.pass ? 0 : 1;
  } finally {
    await bundle.dispose();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    // A run's own failure keeps its stack and exit 2 (1 is a missed criterion); --help and usage
    // mistakes go through failure(): usage on stdout and 0, or the mistake and the usage on stderr and 2.
    if (err instanceof HelpRequested || err instanceof UsageError)
      process.exit(failure(err, "bench:faults", USAGE, (s) => process.stderr.write(s)));
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(2);
  },
);
