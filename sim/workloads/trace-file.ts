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
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { readLines } from "../analyze/json-records";
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

/**
 * Reads a trace line by line: parseTrace (a whole text) and readTraceFile (a file in chunks) feed it the
 * same lines, so both make the same workload. Line numbers count every line, blank ones too.
 */
class TraceLines {
  private readonly parsed: WorkloadRequest[] = [];
  private readonly samples: string[] = [];
  private malformed = 0;
  private mooncake = 0;
  private lineNo = 0;

  get requests(): number {
    return this.parsed.length;
  }

  get lines(): number {
    return this.lineNo;
  }

  async line(raw: string): Promise<void> {
    const lineNo = ++this.lineNo;
    const line = raw.trim();
    if (line === "") return;
    let o: unknown;
    try {
      o = JSON.parse(line);
    } catch {
      this.bad(lineNo, "not JSON");
      return;
    }
    if (o === null || typeof o !== "object" || Array.isArray(o)) {
      this.bad(lineNo, "not a JSON object");
      return;
    }
    const r = await traceRecordRequest(o as Record<string, unknown>);
    if (typeof r === "string") this.bad(lineNo, r);
    else {
      if (r.format === "mooncake") this.mooncake++;
      this.parsed.push(r.request);
    }
  }

  private bad(lineNo: number, reason: string): void {
    this.malformed++;
    if (this.samples.length < MAX_SAMPLES) this.samples.push(`line ${lineNo}: ${reason}`);
  }

  workload(opts: TraceOptions, speed: number): TraceWorkload {
    const parsed = this.parsed;
    // Stable sort by arrival; rebase to the first request and apply the speed factor.
    const order = parsed
      .map((r, i) => [r, i] as const)
      .sort((a, b) => a[0].arrivalMs - b[0].arrivalMs || a[1] - b[1]);
    const t0 = order.length > 0 ? order[0]![0].arrivalMs : 0;
    let requests = order.map(([r]) => ({ ...r, arrivalMs: (r.arrivalMs - t0) / speed }));
    if (opts.limit !== undefined) requests = requests.slice(0, opts.limit);
    return {
      name: opts.name ?? "trace",
      blockTokens: this.mooncake * 2 > parsed.length ? MOONCAKE_BLOCK_TOKENS : OPENAI_LOG_BLOCK_TOKENS,
      requests,
      malformed: this.malformed,
      malformedSamples: this.samples,
    };
  }
}

function speedOf(opts: TraceOptions): number {
  const speed = opts.speed ?? 1;
  if (!(speed > 0 && Number.isFinite(speed))) throw new RangeError(`speed must be > 0, got ${speed}`);
  return speed;
}

export async function parseTrace(text: string, opts: TraceOptions = {}): Promise<TraceWorkload> {
  const speed = speedOf(opts);
  const reader = new TraceLines();
  for (const line of text.split("\n")) await reader.line(line);
  return reader.workload(opts, speed);
}

export interface TraceFileOptions extends TraceOptions {
  /**
   * Read only until this many valid requests are held: the first N in file order (a window, as
   * analyze's --sim-requests takes; then sorted by arrival like the rest). The lines after them are
   * not read, so neither memory nor time grows with the rest of the file, and their malformed lines
   * go uncounted.
   */
  readonly maxRequests?: number;
  /** Called after each chunk read: bytes read so far, the file's size and the requests held. */
  readonly onProgress?: (bytesRead: number, bytes: number, requests: number) => void;
  /** Bytes per read (default 1 MiB): tests make it small to split lines and characters across reads. */
  readonly chunkBytes?: number;
}

export interface TraceFileWorkload extends TraceWorkload {
  /** With maxRequests, when the window filled before the end of the file: how far it was read. */
  readonly window?: { readonly lines: number; readonly bytesRead: number; readonly bytes: number };
}

/**
 * A trace file, read in chunks rather than as one string: the file's text is never held whole, and with
 * `maxRequests` reading stops once the window is full.
 */
export async function readTraceFile(path: string, opts: TraceFileOptions = {}): Promise<TraceFileWorkload> {
  const speed = speedOf(opts);
  const named = { name: opts.name ?? path, ...opts };
  const max = opts.maxRequests;
  if (max !== undefined && !(Number.isInteger(max) && max > 0))
    throw new RangeError(`maxRequests must be a positive integer, got ${max}`);
  const bytes = (await stat(path)).size;
  const reader = new TraceLines();
  const stream = createReadStream(path, { highWaterMark: opts.chunkBytes ?? 1 << 20 });
  // analyze's bounded line reader, with no bound on a line: the whole file was once read as one string, so
  // simulate's own bound is whyUnreadable's on the file (sim/cli.ts).
  const lines = readLines(stream, Number.POSITIVE_INFINITY, () =>
    opts.onProgress?.(stream.bytesRead, bytes, reader.requests),
  )[Symbol.asyncIterator]();
  for (let next = await lines.next(); !next.done; next = await lines.next()) {
    await reader.line(next.value.text ?? "");
    if (max === undefined || reader.requests < max) continue;
    const bytesRead = stream.bytesRead;
    // A window when anything but blank lines is left: the file not read to its end, or, read whole, a line
    // with something on it after this one (those lines are already in hand).
    let unread = bytesRead < bytes;
    while (!unread) {
      const more = await lines.next();
      if (more.done) break;
      unread = (more.value.text ?? "").trim() !== "";
    }
    stream.destroy();
    const w = reader.workload(named, speed);
    return unread ? { ...w, window: { lines: reader.lines, bytesRead, bytes } } : w;
  }
  return reader.workload(named, speed);
}
