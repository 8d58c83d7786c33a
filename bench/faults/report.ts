/**
 * bench/results/faults.{json,md}: one report with two parts, the soak and
 * the fault table, each written by its own command and stating it. A run of
 * either part rewrites only its own part: in the JSON it replaces its key and
 * keeps the other's; in the Markdown it renders its own section from its own
 * data and keeps the other section's text as it was, byte for byte. The other
 * section is never re-rendered from the JSON, because the JSON's other part can
 * be older than the Markdown's (a run whose Markdown was committed without its
 * JSON): re-rendering it put a stale table back beside a new soak.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { renderSoak, type SoakReport } from "./report-soak";
import { renderTable, type TableReport } from "./report-table";

export interface FaultsReport {
  readonly soak?: SoakReport;
  readonly table?: TableReport;
}

type Part = keyof FaultsReport;
/** The report's order: the table first, then the soak. */
const PARTS: readonly Part[] = ["table", "soak"];

/** Each part's own `## ` heading starts with this (report-table.ts and report-soak.ts write them). */
const HEADING: Readonly<Record<Part, string>> = {
  table: "## The fault table",
  soak: "## Fault soak",
};

function header(): string[] {
  return [
    "# Faults: the soak and the fault table",
    "",
    "Written by `npm run bench:faults` (the soak) and `npm run bench:faults -- --table` (the table); each part " +
      "states its own command, machine, runtime and the gateway commit it measured. Emulated engines, not GPUs; " +
      "client, emulators and workerd share one machine, so read latencies as relative.",
    "",
  ];
}

function renderPart(p: Part, r: FaultsReport): string[] {
  if (p === "table") return r.table === undefined ? [] : renderTable(r.table);
  return r.soak === undefined ? [] : renderSoak(r.soak);
}

/**
 * The parts' sections of a faults.md, as written: each from its `## ` heading
 * to the next part's heading (its own `###` subsections included). Text before
 * the first part's heading (the file's header) belongs to no part.
 */
export function markdownSections(md: string): Partial<Record<Part, string>> {
  const lines = md.split("\n");
  const starts: { part: Part; at: number }[] = [];
  let fence = false;
  lines.forEach((line, at) => {
    if (line.startsWith("```")) fence = !fence;
    if (fence) return;
    const part = PARTS.find((p) => line.startsWith(HEADING[p]));
    if (part !== undefined) starts.push({ part, at });
  });
  const out: Partial<Record<Part, string>> = {};
  starts.forEach((s, i) => {
    if (out[s.part] !== undefined) throw new Error(`faults.md holds two "${HEADING[s.part]}" sections`);
    const end = starts[i + 1]?.at ?? lines.length;
    out[s.part] = lines.slice(s.at, end).join("\n").trimEnd();
  });
  return out;
}

/**
 * The Markdown after a run of the parts in `part`: those sections rendered
 * from `part`, every other section kept from `previousMd` as it stands.
 */
export function mergeFaultsMarkdown(previousMd: string | undefined, part: FaultsReport): string {
  const kept = previousMd === undefined ? {} : markdownSections(previousMd);
  const out = header();
  for (const p of PARTS) {
    if (part[p] !== undefined) out.push(...renderPart(p, part));
    else if (kept[p] !== undefined) out.push(kept[p], "");
  }
  return `${out.join("\n").trimEnd()}\n`;
}

async function readIfThere(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/**
 * Writes this run's part into the report at `base`.{json,md}, keeping the
 * other part of each file as it is there; returns the merged JSON.
 */
export async function writeFaultsReport(base: string, part: FaultsReport): Promise<FaultsReport> {
  const previousJson = await readIfThere(`${base}.json`);
  const previous = previousJson === undefined ? {} : (JSON.parse(previousJson) as FaultsReport);
  const md = mergeFaultsMarkdown(await readIfThere(`${base}.md`), part);
  const merged: FaultsReport = { ...previous, ...part };
  await mkdir(dirname(base), { recursive: true });
  await writeFile(`${base}.json`, `${JSON.stringify(merged, null, 2)}\n`);
  await writeFile(`${base}.md`, md);
  return merged;
}
