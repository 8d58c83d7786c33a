/**
 * Runs one raw-socket case: writes its bytes as they are (with their
 * pauses), ends the connection the way the case says, and reads what comes
 * back until the server closes or the case's bound passes. The answer is
 * parsed as HTTP/1.x (a chunked body de-chunked) and judged like any other.
 */
import { connect } from "node:net";
import type { RawCase } from "./case-types";
import { judge, type Secrets } from "./judge";
import type { CaseOutcome } from "./send";

export interface RawAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

function dechunk(bytes: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = bytes.indexOf("\r\n", at);
    if (eol < 0) break;
    const size = Number.parseInt(bytes.subarray(at, eol).toString("latin1").split(";")[0]!, 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(bytes.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

/** The first HTTP answer in `bytes`, or undefined when there is none. */
export function parseRawAnswer(bytes: Buffer): RawAnswer | undefined {
  const end = bytes.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const lines = bytes.subarray(0, end).toString("latin1").split("\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "");
  if (m === null) return undefined;
  const headers = new Headers();
  for (const l of lines.slice(1)) {
    const i = l.indexOf(":");
    if (i > 0) {
      try {
        headers.append(l.slice(0, i).trim(), l.slice(i + 1).trim());
      } catch {
        // A header value Headers refuses: kept out, the status still counts.
      }
    }
  }
  let body = bytes.subarray(end + 4);
  if ((headers.get("transfer-encoding") ?? "").includes("chunked")) body = dechunk(body);
  else {
    const len = Number(headers.get("content-length"));
    if (Number.isInteger(len)) body = body.subarray(0, len);
  }
  return { status: Number(m[1]), headers, body: body.toString("utf8") };
}

/** A whole final answer is in: its content-length is met, or its chunked body ended (no need to wait for a close). */
function answerComplete(bytes: Buffer): boolean {
  const end = bytes.indexOf("\r\n\r\n");
  if (end < 0) return false;
  const head = bytes.subarray(0, end).toString("latin1");
  if (/^HTTP\/1\.[01] 100/.test(head)) return answerComplete(bytes.subarray(end + 4));
  if (/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) return bytes.subarray(end + 4).includes("0\r\n\r\n");
  const len = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  return len !== null && bytes.length - end - 4 >= Number(len[1]);
}

/** The problem of an upload the connection closed on with no answer (upload.ts clears it when the log shows one). */
export const UNANSWERED = "connection closed with no answer";

export function sendRaw(port: number, c: RawCase, secrets: Secrets): Promise<CaseOutcome> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    let writeError: string | undefined;
    const socket = connect(port, "127.0.0.1");
    const finish = (why: "closed" | "timeout"): void => {
      if (settled) return;
      settled = true;
      clearTimeout(bound);
      socket.destroy();
      const ms = performance.now() - t0;
      const bytes = Buffer.concat(chunks);
      const a = parseRawAnswer(bytes);
      if (a === undefined) {
        const problems =
          why === "timeout" && c.end !== "close"
            ? [`no answer within ${c.boundMs} ms (${bytes.length} bytes)`]
            : why === "closed" && c.upload !== undefined
              ? [`${UNANSWERED} (${bytes.length} bytes${writeError ? `, our write: ${writeError}` : ""})`]
              : [];
        const upload = why === "closed" && c.upload !== undefined ? { unansweredId: c.upload.requestId } : {};
        const wrote = writeError !== undefined ? { writeError } : {};
        resolve({ label: c.label, status: why, ms, problems, ...upload, ...wrote });
        return;
      }
      // 100 Continue is an interim answer: judge the final one after it.
      const final =
        a.status === 100 ? (parseRawAnswer(bytes.subarray(bytes.indexOf("\r\n\r\n") + 4)) ?? a) : a;
      const v = judge({ ...final, method: c.method, runtimeMayRefuse: c.runtimeMayRefuse === true }, secrets);
      const code = v.code !== undefined ? { code: v.code } : {};
      const wrote = writeError !== undefined ? { writeError } : {};
      resolve({
        label: c.label,
        status: final.status,
        origin: v.origin,
        ...code,
        ...wrote,
        ms,
        problems: v.problems,
      });
    };
    const bound = setTimeout(() => finish("timeout"), c.boundMs);
    socket.on("data", (d: Buffer) => {
      chunks.push(d);
      if (answerComplete(Buffer.concat(chunks))) finish("closed");
    });
    socket.on("close", () => finish("closed"));
    socket.on("error", (err: Error) => {
      // A reset after our bytes: whatever came before it is the answer. A server that refuses an upload
      // (413) answers and closes before reading it all, so our write fails (EPIPE) with its answer in.
      writeError ??= (err as NodeJS.ErrnoException).code ?? err.message;
    });
    socket.on("connect", async () => {
      for (const p of c.parts) {
        if (p.delayMs > 0) await new Promise((r) => setTimeout(r, p.delayMs));
        if (settled || socket.destroyed) return;
        if (p.bytes.length > 0) socket.write(p.bytes);
      }
      if (c.end === "half-close") socket.end();
      else if (c.end === "close") finish("closed");
    });
  });
}
