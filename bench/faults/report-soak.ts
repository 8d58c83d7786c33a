/** The soak's part of bench/results/faults.md: verdict, criteria, and the figures behind them. */

import { fmtMs, reproduceLines, table } from "../../sim/format";
import type { Summary } from "../latency-summary";
import type { Provenance } from "./provenance";
import { cellsSentence } from "./report-table";
import type { SoakResult } from "./soak";

export interface SoakReport {
  readonly provenance: Provenance;
  readonly result: SoakResult;
  /** ROUTER_CELLS the gateway ran with; absent: one RouterDO per pool. */
  readonly cells?: number;
}

const lat = (s: Summary) => `${fmtMs(s.p50)} / ${fmtMs(s.p90)} / ${fmtMs(s.p99)} (n ${s.count})`;

/** Per backend, the share of gauge samples in which it was in rotation (state `+` or `t`). */
export function inRotation(s: SoakResult): string {
  const rows = s.series.filter((x) => x.backends !== "").map((x) => x.backends.split(" "));
  return s.emulators
    .map((e, i) => {
      const up = rows.filter((r) => r[i] !== undefined && !r[i]!.endsWith("-")).length;
      return `${e.id} ${((100 * up) / Math.max(1, rows.length)).toFixed(0)}%`;
    })
    .join(", ");
}

export function renderSoak(r: SoakReport): string[] {
  const p = r.provenance;
  const s = r.result;
  const o = s.options;
  const out: string[] = [];
  out.push(`## Fault soak: ${s.verdict.pass ? "PASS" : "FAIL"}`, "");
  out.push(...reproduceLines(p.command, "sh"));
  out.push(
    `${p.startedAt}; ${p.machine}; load average at start ${p.loadAverageAtStart.join(" / ")}. ` +
      `Gateway code: \`${p.gatewayCommit}\`${p.gatewayDirty ? " (with uncommitted changes)" : ""} (checkout ${p.commit}), ` +
      `served by ${p.runtime}, production defaults. ${o.clients} closed-loop streaming clients for ${s.wallS} s ` +
      `in front of 4 in-process emulators; ${s.flapping}; ${s.throttling}. Gauges every ${o.sampleEveryS} s.${cellsSentence(r.cells)}`,
    "",
  );
  out.push(
    table(
      ["criterion", "", "measured"],
      s.verdict.criteria.map((c) => [c.name, c.pass ? "pass" : "**FAIL**", c.detail]),
    ),
    "",
  );
  out.push(
    "Memory is judged flat when workerd's RSS (the Worker and the RouterDO share the process) has a least-squares " +
      `slope of at most ${o.rssToleranceMiBPerMin} MiB/min over the second half of the run (the first half holds the ` +
      "warm-up), and the affinity index (router.indexBytes) never exceeds its own bound (40 B × capacity entries).",
    "",
  );
  out.push("### Requests", "");
  const e = s.endings;
  out.push(
    `${s.requests} requests: ${e.done} ended with [DONE], ${e.error_event} with an SSE error event ` +
      `(${s.verdict.excusedCuts} of them streams in flight on ${s.flapping.split(":")[0]} when it was killed), ` +
      `${e.http_error} with an HTTP error, ${e.broken} broken. ${s.kills.length} kills; the throttling backend sent ` +
      `${s.throttles} 429s. Per the gateway's log lines (${s.loggedRequests} of ${s.requests} found): ${s.retried} ` +
      `retried on another backend, ${s.retryRefused} refused a retry by the budget. Leases after the clients ` +
      `stopped: ${s.finalLeases ?? "unknown"}${s.leasesZeroAfterMs !== null ? ` (0 after ${fmtMs(s.leasesZeroAfterMs)})` : ""}.`,
    "",
  );
  const tallies = (name: string, t: SoakResult["byStatus"]) =>
    `${name}: ${Object.entries(t)
      .map(([k, v]) => `${k} ${v.requests}${v.notDone > 0 ? ` (${v.notDone} not [DONE])` : ""}`)
      .join(", ")}`;
  out.push(`- ${tallies("by status", s.byStatus)}`);
  out.push(`- ${tallies("by final backend", s.byBackend)}`);
  out.push(`- ${tallies("by route", s.byRoute)}`, "");
  out.push(
    table(
      ["TTFT of requests that ended with [DONE]", "p50 / p90 / p99"],
      [
        ["all", lat(s.ttftMs.all)],
        ["started while the flapping backend was up", lat(s.ttftMs.aUp)],
        ["started while it was down", lat(s.ttftMs.aDown)],
        ["retried on another backend", lat(s.ttftMs.retried)],
      ],
    ),
    "",
  );
  out.push(`In rotation (not ejected), share of the gauge samples: ${inRotation(s)}.`, "");
  out.push(`RouterDO usage at the end: \`${JSON.stringify(s.finalUsage)}\`.`, "");
  const m = s.memory;
  out.push(`Memory: RSS max ${m.rssMaxMiB.toFixed(1)} MiB; ${m.detail}.`, "");
  if (s.failures.length > 0) {
    out.push("### Failed requests", "");
    out.push(
      table(
        ["id", "start s", "end s", "status", "ending", "backend", "gateway log", "error"],
        s.failures.map((f) => [
          f.id,
          (f.startMs / 1000).toFixed(2),
          (f.endMs / 1000).toFixed(2),
          String(f.status),
          f.ending,
          f.backend ?? "–",
          f.log === undefined
            ? "–"
            : `${f.log.failure ?? ""}${f.log.retriedFrom !== undefined ? ` retried from ${f.log.retriedFrom}` : ""}${f.log.retryRefused === true ? " retry refused" : ""}`,
          (f.error ?? "").replaceAll("|", "\\|").slice(0, 100),
        ]),
      ),
      "",
    );
  }
  out.push("### Gauges every 30 s", "");
  const every = Math.max(1, Math.round(30 / o.sampleEveryS));
  out.push(
    table(
      [
        "t (s)",
        "RSS MiB",
        "workerd CPU s",
        "leases",
        "index bytes",
        "in flight / state per backend",
        "retried",
        "ejections",
      ],
      s.series
        .filter((_, i) => i % every === 0)
        .map((x) => [
          String(x.tS),
          String(x.rssMiB ?? "–"),
          (x.cpuMs / 1000).toFixed(1),
          String(x.leases ?? "–"),
          String(x.indexBytes ?? "–"),
          x.backends,
          String(x.retried ?? "–"),
          String(x.ejections ?? "–"),
        ]),
    ),
    "",
    "State per backend: `+` in rotation, `t` throttled (a 429's retry-after), `-` ejected.",
    "",
  );
  return out;
}
