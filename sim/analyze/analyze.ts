/**
 * One analysis of a request log: a single streaming pass over the input
 * (shared prefixes, per tenant, the simulation window, counts), then the
 * fleet estimate on the window and the verdict. Memory is bounded by the
 * options (key table, window), not by the length of the input.
 */
import type { Readable } from "node:stream";
import { type EstimateOptions, estimateFleet, type FleetEstimate } from "./fleet-estimate";
import { readJsonRecords } from "./json-records";
import { type InputFormat, keyedRequests } from "./keyed-request";
import type { Progress } from "./progress";
import { SharedPrefixes, type SharedPrefixReport } from "./shared-prefixes";
import { SimWindow } from "./sim-window";
import { decide, type VerdictResult } from "./verdict";

export interface AnalyzeOptions extends Omit<EstimateOptions, "logRatePerSec" | "onRun"> {
  readonly tableBytes: number;
  readonly windowRequests: number;
  readonly windowTokenIds?: number;
  /** Rows of the top-N lists (tenants, prefixes). */
  readonly top: number;
  /** Size of the input in bytes, when known, for the progress bar. */
  readonly totalBytes?: number;
  readonly progress?: Progress;
  readonly name?: string;
}

export interface Analysis {
  readonly requests: number;
  readonly malformed: number;
  /** First malformed records, "line N: reason". */
  readonly malformedSamples: readonly string[];
  /**
   * Lines that are neither JSON nor the start of an object: text around the log (npm run dev's terminal,
   * wrangler's own lines), skipped, not malformed.
   */
  readonly skippedLines: number;
  /** The first skipped line's number, when any. */
  readonly firstSkippedLine?: number;
  /** Input objects that hold no request to the fleet (other tail events, /healthz, refused requests). */
  readonly ignored: number;
  readonly formats: Readonly<Record<InputFormat, number>>;
  readonly logRatePerSec: number;
  readonly logHours: number;
  readonly prefixes: SharedPrefixReport;
  /** Null when the input holds no request. */
  readonly estimate: FleetEstimate | null;
  readonly verdict: VerdictResult | null;
  readonly readMs: number;
  readonly simulateMs: number;
}

const MAX_SAMPLES = 5;

export async function analyze(input: Readable, opts: AnalyzeOptions): Promise<Analysis> {
  const t0 = performance.now();
  const shared = new SharedPrefixes({ tableBytes: opts.tableBytes });
  const window = new SimWindow({
    maxRequests: opts.windowRequests,
    ...(opts.windowTokenIds !== undefined ? { maxTokenIds: opts.windowTokenIds } : {}),
  });
  const formats: Record<InputFormat, number> = { mooncake: 0, openai: 0, gateway: 0 };
  const samples: string[] = [];
  let requests = 0;
  let malformed = 0;
  let ignored = 0;
  let skippedLines = 0;
  let firstSkippedLine: number | undefined;
  const bad = (line: number, reason: string): void => {
    malformed++;
    if (samples.length < MAX_SAMPLES) samples.push(`line ${line}: ${reason}`);
  };
  const onBytes = (bytes: number): void =>
    opts.progress?.update(
      opts.totalBytes !== undefined && opts.totalBytes > 0 ? bytes / opts.totalBytes : undefined,
      `reading: ${requests.toLocaleString("en-US")} requests, ${(bytes / 2 ** 20).toFixed(0)} MiB`,
    );

  for await (const rec of readJsonRecords(input, { onBytes })) {
    if (rec.kind === "malformed") {
      bad(rec.line, rec.reason);
      continue;
    }
    if (rec.kind === "text") {
      skippedLines++;
      firstSkippedLine ??= rec.line;
      continue;
    }
    for (const p of await keyedRequests(rec.value)) {
      if (p.kind === "malformed") bad(rec.line, p.reason);
      else if (p.kind === "ignored") ignored++;
      else {
        requests++;
        formats[p.request.format]++;
        shared.add(p.request);
        window.offer(p.request);
      }
    }
  }
  const t1 = performance.now();
  const prefixes = shared.report(opts.top);
  let estimate: FleetEstimate | null = null;
  if (requests > 0)
    estimate = estimateFleet(window.workload(opts.name ?? "log"), {
      ...opts,
      logRatePerSec: window.logRatePerSec,
      onRun: (done, most) =>
        opts.progress?.update(done / most, `simulating: ${done} runs of at most ${most}`),
    });
  opts.progress?.done();
  return {
    requests,
    malformed,
    malformedSamples: samples,
    skippedLines,
    ...(firstSkippedLine !== undefined ? { firstSkippedLine } : {}),
    ignored,
    formats,
    logRatePerSec: window.logRatePerSec,
    logHours: window.logHours,
    prefixes,
    estimate,
    verdict: estimate === null ? null : decide(prefixes.share, estimate),
    readMs: t1 - t0,
    simulateMs: performance.now() - t1,
  };
}
