/**
 * Large uploads over a raw socket instead of fetch. The gateway refuses a
 * body past its cap (413) as soon as the cap is passed, and some other
 * answers (a 400 on a bad field) come before the whole body is read; then it
 * closes the connection while the client is still writing. A close with
 * unread bytes is a TCP reset, which can destroy the answer on its way, and
 * fetch (undici) reports `write EPIPE`/`ECONNRESET` and drops any answer it
 * had: the judge could not tell a gateway that refused the upload from one
 * that died. Here:
 * - written by hand (raw.ts), whatever answer arrives is read and judged like
 *   any other, our write's failure noted beside it;
 * - when nothing arrives, the case carries an x-request-id of ours, and the
 *   gateway's own log line for that id (status < 500) is the answer it gave
 *   (reconcileUploads); no line, or a 5xx, stays a problem — a gateway that
 *   died or dropped the request still fails the fuzz.
 */
import type { FetchCase, RawCase } from "./case-types";
import { UNANSWERED } from "./raw";
import type { CaseOutcome } from "./send";

/** Bodies from this size on go over a raw socket: well under the gateway's 16 MiB cap, above ordinary bodies. */
export const RAW_UPLOAD_BYTES = 1024 * 1024;

/** A fetch case whose body is big enough that the gateway may answer before reading it all, and that does not leave. */
export function isLargeUpload(c: FetchCase): boolean {
  return c.body !== undefined && c.body.length >= RAW_UPLOAD_BYTES && c.leave === undefined;
}

/**
 * The same request as raw HTTP/1.1 bytes (header values as Latin-1, as fetch sends them), waiting for the
 * answer, with `requestId` as its x-request-id (a fuzzed odd id in the case gives way: the log must find it).
 */
export function uploadAsRaw(c: FetchCase, port: number, requestId: string): RawCase {
  const body = c.body ?? new Uint8Array();
  let head = `${c.method} ${c.path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n`;
  for (const [k, v] of Object.entries(c.headers))
    if (k.toLowerCase() !== "x-request-id") head += `${k}: ${v}\r\n`;
  head += `x-request-id: ${requestId}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`;
  return {
    kind: "raw",
    label: c.label,
    parts: [{ bytes: Buffer.concat([Buffer.from(head, "latin1"), body]), delayMs: 0 }],
    end: "keep",
    boundMs: c.boundMs,
    method: c.method,
    upload: { requestId },
  };
}

/** The status the gateway logged for each request id (one JSON line per request, src/worker/log.ts). */
function loggedStatuses(lines: readonly string[], ids: ReadonlySet<string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of lines) {
    if (!l.startsWith("{")) continue;
    const id = /"requestId":"([^"]*)"/.exec(l)?.[1];
    if (id === undefined || !ids.has(id)) continue;
    const status = /"status":(\d{3})/.exec(l)?.[1];
    if (status !== undefined) out.set(id, Number(status));
  }
  return out;
}

/**
 * Each upload whose connection closed with no answer, settled by the gateway's log: a line for its id
 * with a status below 500 means the gateway answered (a refusal the reset destroyed), so the case takes
 * that status and loses its problem; anything else keeps it, and says what the log showed.
 */
export function reconcileUploads(
  outcomes: readonly CaseOutcome[],
  logLines: readonly string[],
): CaseOutcome[] {
  const ids = new Set(outcomes.flatMap((o) => (o.unansweredId !== undefined ? [o.unansweredId] : [])));
  if (ids.size === 0) return [...outcomes];
  const logged = loggedStatuses(logLines, ids);
  return outcomes.map((o) => {
    if (o.unansweredId === undefined) return o;
    const status = logged.get(o.unansweredId);
    const others = o.problems.filter((p) => !p.startsWith(UNANSWERED));
    if (status !== undefined && status < 500) return { ...o, status, origin: "worker", problems: others };
    const seen = status === undefined ? "no line in the gateway's log" : `the gateway logged ${status}`;
    return { ...o, problems: [...others, `${UNANSWERED}, ${seen}`] };
  });
}
