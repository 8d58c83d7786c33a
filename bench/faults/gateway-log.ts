/**
 * The gateway's own account of each request: the one JSON log line per
 * request (src/worker/log.ts) that workerd writes to its output, keyed by the
 * x-request-id the bench sent. It says what a client cannot see: whether the
 * request was retried (and from which backend), refused a retry by the
 * budget, or how its final attempt failed.
 */
import { readFile } from "node:fs/promises";

export interface GatewayLine {
  readonly requestId: string;
  readonly status?: number;
  readonly backend?: string;
  readonly reason?: string;
  readonly retriedFrom?: string;
  readonly retryRefused?: boolean;
  readonly failure?: string;
  readonly aborted?: boolean;
  readonly ttftMs?: number;
  readonly error?: string;
}

/** The request lines of a log text (other output, and lines that do not parse, are skipped). */
export function parseGatewayLog(text: string): Map<string, GatewayLine> {
  const out = new Map<string, GatewayLine>();
  for (const line of text.split("\n")) {
    const at = line.indexOf('{"msg":"request"');
    if (at < 0) continue;
    try {
      const o = JSON.parse(line.slice(at)) as GatewayLine;
      if (typeof o.requestId === "string") out.set(o.requestId, o);
    } catch {
      // A line cut by the runtime's buffering: not a request line we can use.
    }
  }
  return out;
}

export async function readGatewayLog(logFile: string): Promise<Map<string, GatewayLine>> {
  return parseGatewayLog(await readFile(logFile, "utf8").catch(() => ""));
}
