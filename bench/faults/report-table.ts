/** The fault table's part of bench/results/faults.md: as filed vs now, and what ordinary clients saw. */
import { fmtMs, reproduceLines, table } from "../../sim/format";
import type { Provenance } from "./provenance";
import type { PhaseFigures, ScenarioResult } from "./run-scenario";

export interface TableReport {
  readonly provenance: Provenance;
  readonly baselineS: number;
  readonly results: readonly ScenarioResult[];
  /** ROUTER_CELLS the gateway ran with; absent: one RouterDO per pool. */
  readonly cells?: number;
}

const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ");
const ms = (x: number | null) => (x === null ? "–" : fmtMs(x));

function failed(p: PhaseFigures): string {
  const parts = Object.entries(p.failed).map(([k, v]) => `${v} ${k}`);
  return parts.length === 0 ? "0" : parts.join(", ");
}

/** Says the pool was split into RouterDO cells; nothing for one RouterDO (the reports of record read as before). */
export function cellsSentence(cells: number | undefined): string {
  return cells === undefined || cells === 1
    ? ""
    : ` The pool split into ${cells} RouterDO cells (ROUTER_CELLS=${cells}); gateway gauges are the cells' summed.`;
}

export function renderTable(r: TableReport): string[] {
  const p = r.provenance;
  const out: string[] = [];
  out.push("## The fault table, re-measured", "");
  out.push(...reproduceLines(p.command, "sh"));
  out.push(
    `${p.startedAt}; ${p.machine}; load average at start ${p.loadAverageAtStart.join(" / ")}. ` +
      `Gateway code: \`${p.gatewayCommit}\`${p.gatewayDirty ? " (with uncommitted changes)" : ""} (checkout ${p.commit}), ` +
      `served by ${p.runtime}, with production defaults (wrangler.toml). Each fault on a fresh rig of 4 in-process ` +
      `emulators (Llama-3.1-8B/H100 model, real time), after ${r.baselineS} s of 20 closed-loop ordinary streams ` +
      "(16 shared 1,024-token system prompts, a 32-token question each, max_tokens 16–64) unless the row says otherwise." +
      cellsSentence(r.cells),
    "",
  );
  out.push(
    table(
      ["fault", "before the fix (as filed)", "now"],
      r.results.map((x) => [
        cell(x.fault),
        cell(x.asFiled),
        cell(x.error === undefined ? x.now : `scenario failed: ${x.error.split("\n")[0]}`),
      ]),
    ),
    "",
  );
  out.push("### What ordinary clients saw, and what the gateway did", "");
  out.push(
    "Ordinary requests: before = ended before the fault; during = in flight at any time while it lasted; after = " +
      "started after it was lifted. Failed = not ended " +
      "with [DONE]. TTFT of the requests that ended with [DONE]. Gateway counters are the RouterDO's across the fault " +
      "(from its last sample before it to the end); leases after the clients stopped.",
    "",
  );
  out.push(
    table(
      [
        "fault",
        "requests before / during / after",
        "failed during",
        "failed after",
        "TTFT p50 before → during",
        "TTFT p99 before → during (max)",
        "ejections / restorations",
        "retried / refused",
        "leases at end",
        "workerd CPU during",
        "RSS before → max during",
      ],
      r.results.map((x) => {
        const o = x.ordinary;
        const u = x.gateway.usage;
        return [
          x.id,
          `${o.before.requests} / ${o.during.requests} / ${o.after.requests}`,
          failed(o.during),
          failed(o.after),
          `${ms(o.before.ttftP50Ms)} → ${ms(o.during.ttftP50Ms)}`,
          `${ms(o.before.ttftP99Ms)} → ${ms(o.during.ttftP99Ms)} (${ms(o.during.ttftMaxMs)})`,
          `${u.ejections ?? "–"} / ${u.restorations ?? "–"}`,
          `${u.retried ?? "–"} / ${u.retriesRefused ?? "–"}`,
          `${x.gateway.leasesAtEnd ?? "–"}${x.gateway.leasesZeroAfterMs !== null ? ` (0 after ${ms(x.gateway.leasesZeroAfterMs)})` : ""}`,
          ms(x.gateway.workerdCpuMsDuring),
          `${x.gateway.rssBeforeMiB ?? "–"} → ${x.gateway.rssMaxDuringMiB ?? "–"} MiB`,
        ];
      }),
    ),
    "",
  );
  out.push("### Each scenario's own figures", "");
  for (const x of r.results) {
    const figs = Object.entries(x.figures).map(([k, v]) => `${k} ${v === null ? "–" : String(v)}`);
    out.push(`- **${x.id}** (fault at ${x.faultAtS} s, lifted at ${x.clearAtS} s): ${figs.join("; ")}`);
  }
  out.push("");
  return out;
}
