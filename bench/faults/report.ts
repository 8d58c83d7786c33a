/**
 * bench/results/faults.{json,md}: one report with two parts, the soak and
 * the fault table, each written by its own command and stating it. A run of
 * either part replaces that part and keeps the other, then renders the
 * Markdown from the whole JSON.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { renderSoak, type SoakReport } from "./report-soak";
import { renderTable, type TableReport } from "./report-table";

export interface FaultsReport {
  readonly soak?: SoakReport;
  readonly table?: TableReport;
}

export function renderFaultsMarkdown(r: FaultsReport): string {
  const out: string[] = [
    "# Faults: the soak and the fault table",
    "",
    "Written by `npm run bench:faults` (the soak) and `npm run bench:faults -- --table` (the table); each part " +
      "states its own command, machine, runtime and the gateway commit it measured. Emulated engines, not GPUs; " +
      "client, emulators and workerd share one machine, so read latencies as relative.",
    "",
  ];
  if (r.table !== undefined) out.push(...renderTable(r.table));
  if (r.soak !== undefined) out.push(...renderSoak(r.soak));
  return `${out.join("\n").trimEnd()}\n`;
}

/** Merges `part` into the report at `base`.json (if any) and writes both files; returns the merged report. */
export async function writeFaultsReport(base: string, part: FaultsReport): Promise<FaultsReport> {
  let previous: FaultsReport = {};
  try {
    previous = JSON.parse(await readFile(`${base}.json`, "utf8")) as FaultsReport;
  } catch {
    // No report yet.
  }
  const merged: FaultsReport = { ...previous, ...part };
  await mkdir(dirname(base), { recursive: true });
  await writeFile(`${base}.json`, `${JSON.stringify(merged, null, 2)}\n`);
  await writeFile(`${base}.md`, renderFaultsMarkdown(merged));
  return merged;
}
