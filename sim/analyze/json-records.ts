/**
 * JSON objects from a byte stream, in bounded memory: JSONL (one object a
 * line) and the pretty-printed stream `wrangler tail --format json` writes
 * (each event as JSON.stringify(event, null, 4): `{` alone on a line, the
 * body indented, `}` alone on a line), mixed freely.
 *
 * Nothing here is fatal. A line that opens an object (`{`) but is not JSON,
 * an object cut off by the end of the input or by the next top-level `{`,
 * and anything longer than `maxRecordBytes` is reported as malformed with
 * its line number, and reading goes on. A line that is not JSON and does not
 * open an object is text around the log (a terminal's banners, wrangler
 * dev's own `[wrangler:inf] POST … 200 OK`): reported as such, so a reader
 * can skip and count it instead of calling a broken record what was never
 * one. Memory is one record (at most `maxRecordBytes`) plus one
 * chunk of input.
 */
import type { Readable } from "node:stream";

export type JsonRecord =
  | { readonly kind: "object"; readonly value: unknown; readonly line: number }
  | { readonly kind: "malformed"; readonly reason: string; readonly line: number }
  | { readonly kind: "text"; readonly line: number };

/** A record longer than this is malformed: the gateway caps request bodies at 16 MiB. */
export const DEFAULT_MAX_RECORD_BYTES = 16 << 20;

export interface ReadOptions {
  readonly maxRecordBytes?: number;
  /** Called with the bytes consumed so far, once per input chunk. */
  readonly onBytes?: (bytes: number) => void;
}

const NL = 0x0a;

/**
 * Raw lines (without "\n" or a trailing "\r"), each with its number; too-long lines as `null`. A line split
 * across chunks, or a character split across them, is joined before it is decoded. `onBytes` is called after
 * each chunk's lines, with the bytes consumed so far. Also simulate's trace reader (workloads/trace-file.ts).
 */
export async function* readLines(input: Readable, maxBytes: number, onBytes?: (n: number) => void) {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let tooLong = false;
  let lineNo = 0;
  let read = 0;
  const take = (tail: Buffer): string | null => {
    const buf = pending.length === 0 ? tail : Buffer.concat([...pending, tail]);
    pending = [];
    pendingBytes = 0;
    if (tooLong) {
      tooLong = false;
      return null;
    }
    const end = buf.length > 0 && buf[buf.length - 1] === 0x0d ? buf.length - 1 : buf.length;
    return buf.toString("utf8", 0, end);
  };
  for await (const chunk of input) {
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    read += buf.length;
    let start = 0;
    for (let nl = buf.indexOf(NL, start); nl >= 0; nl = buf.indexOf(NL, start)) {
      const part = buf.subarray(start, nl);
      tooLong ||= pendingBytes + part.length > maxBytes;
      yield { line: ++lineNo, text: take(part) };
      start = nl + 1;
    }
    const rest = buf.subarray(start);
    if (pendingBytes + rest.length > maxBytes) {
      // Keep nothing of a line that is already too long; remember to report it when it ends.
      tooLong = true;
      pending = [];
      pendingBytes = 0;
    } else if (rest.length > 0) {
      pending.push(Buffer.from(rest));
      pendingBytes += rest.length;
    }
    onBytes?.(read);
  }
  if (pendingBytes > 0 || tooLong) yield { line: ++lineNo, text: take(Buffer.alloc(0)) };
}

function parse(text: string, line: number): JsonRecord {
  try {
    return { kind: "object", value: JSON.parse(text), line };
  } catch {
    // Only a line that starts an object was meant as a record; anything else is text beside the log.
    return text.trimStart().startsWith("{")
      ? { kind: "malformed", reason: "not JSON", line }
      : { kind: "text", line };
  }
}

/** Every JSON value of the input, in order, with malformed stretches reported in their place. */
export async function* readJsonRecords(input: Readable, opts: ReadOptions = {}): AsyncGenerator<JsonRecord> {
  const maxBytes = opts.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  // A multi-line object being collected: its lines, size and first line number.
  let open: string[] | null = null;
  let openBytes = 0;
  let openLine = 0;
  let skipping = false;
  const tooLong = `longer than ${maxBytes} bytes`;
  for await (const { line, text } of readLines(input, maxBytes, opts.onBytes)) {
    if (text === null) {
      if (open !== null) skipping = true;
      else yield { kind: "malformed", reason: `line ${tooLong}`, line };
      continue;
    }
    const head = text.trimEnd();
    if (open === null) {
      if (head === "{") {
        open = [head];
        openBytes = head.length;
        openLine = line;
        skipping = false;
      } else if (head.trim() !== "") yield parse(text, line);
      continue;
    }
    if (head === "{") {
      // A new top-level object while one is open: the open one was cut off.
      yield { kind: "malformed", reason: "object cut off before its closing brace", line: openLine };
      open = [head];
      openBytes = head.length;
      openLine = line;
      skipping = false;
      continue;
    }
    if (!skipping) {
      openBytes += text.length + 1;
      if (openBytes > maxBytes) {
        skipping = true;
        open = [];
      } else open.push(text);
    }
    if (head === "}") {
      yield skipping
        ? { kind: "malformed", reason: `object ${tooLong}`, line: openLine }
        : parse(open.join("\n"), openLine);
      open = null;
      skipping = false;
    }
  }
  if (open !== null)
    yield { kind: "malformed", reason: "object cut off by the end of the input", line: openLine };
}
