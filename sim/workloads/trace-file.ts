/**
 * Trace files: JSONL in the Mooncake format, the OpenAI request-log format,
 * or a mix; the format is detected per line. A line that is not JSON, or
 * matches neither shape, or fails validation is counted in
 * Workload.malformed (with its first few reasons kept for the report) and
 * skipped: a bad line never stops a replay.
 *
 * blockTokens: 512 when most parsed lines are Mooncake (its hash ids are
 * 512-token blocks), else 16 (vLLM's block size, used for OpenAI logs).
 * Arrivals: relative to the earliest request, divided by `speed` (2 = twice as fast).
 */
import { readFile } from "node:fs/promises";
import { looksLikeMooncake, MOONCAKE_BLOCK_TOKENS, mooncakeRequest } from "./mooncake";
import { looksLikeOpenAI, OPENAI_LOG_BLOCK_TOKENS, openAIRequest } from "./openai-log";
import type { Workload, WorkloadRequest } from "./types";

export interface TraceOptions {
  /** Replay speed factor: arrival = (t − t0) / speed. Default 1. */
  readonly speed?: number;
  readonly name?: string;
  /** Keep at most this many requests (after sorting by arrival). */
  readonly limit?: number;
}

export interface TraceWorkload extends Workload {
  /** First malformed lines, "line N: reason", for the report. */
  readonly malformedSamples: readonly string[];
}

const MAX_SAMPLES = 5;

/** One parsed trace line, in whichever format it matched. */
export interface TraceRecord {
  readonly format: "mooncake" | "openai";
  readonly request: WorkloadRequest;
}

/** The request of one JSON object of a trace, format detected, or why it is malformed. */
export async function traceRecordRequest(rec: Record<string, unknown>): Promise<TraceRecord | string> {
  if (looksLikeMooncake(rec)) {
    const request = mooncakeRequest(rec);
    return typeof request === "string" ? request : { format: "mooncake", request };
  }
  if (looksLikeOpenAI(rec)) {
    const request = openAIRequest(rec);
    return typeof request === "string" ? request : { format: "openai", request };
  }
  return "neither a Mooncake record (hash_ids) nor an OpenAI request (messages/prompt)";
}

export async function parseTrace(text: string, opts: TraceOptions = {}): Promise<TraceWorkload> {
  const speed = opts.speed ?? 1;
  if (!(speed > 0 && Number.isFinite(speed))) throw new RangeError(`speed must be > 0, got ${speed}`);
  const lines = text.split("\n");
  const parsed: WorkloadRequest[] = [];
  const samples: string[] = [];
  let malformed = 0;
  let mooncake = 0;
  const bad = (lineNo: number, reason: string): void => {
    malformed++;
    if (samples.length < MAX_SAMPLES) samples.push(`line ${lineNo}: ${reason}`);
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    let o: unknown;
    try {
      o = JSON.parse(line);
    } catch {
      bad(i + 1, "not JSON");
      continue;
    }
    if (o === null || typeof o !== "object" || Array.isArray(o)) {
      bad(i + 1, "not a JSON object");
      continue;
    }
    const r = await traceRecordRequest(o as Record<string, unknown>);
    if (typeof r === "string") bad(i + 1, r);
    else {
      if (r.format === "mooncake") mooncake++;
      parsed.push(r.request);
    }
  }
  // Stable sort by arrival; rebase to the first request and apply the speed factor.
  const order = parsed
    .map((r, i) => [r, i] as const)
    .sort((a, b) => a[0].arrivalMs - b[0].arrivalMs || a[1] - b[1]);
  const t0 = order.length > 0 ? order[0]![0].arrivalMs : 0;
  let requests = order.map(([r]) => ({ ...r, arrivalMs: (r.arrivalMs - t0) / speed }));
  if (opts.limit !== undefined) requests = requests.slice(0, opts.limit);
  return {
    name: opts.name ?? "trace",
    blockTokens: mooncake * 2 > parsed.length ? MOONCAKE_BLOCK_TOKENS : OPENAI_LOG_BLOCK_TOKENS,
    requests,
    malformed,
    malformedSamples: samples,
  };
}

export async function readTraceFile(path: string, opts: TraceOptions = {}): Promise<TraceWorkload> {
  const text = await readFile(path, "utf8");
  return parseTrace(text, { name: opts.name ?? path, ...opts });
}
