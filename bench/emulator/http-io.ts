/** Whole-body reads and writes for the emulator's plain (non-streamed) requests and answers. */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { HttpError } from "./http-error";

/** Request bodies above this are refused (a 1M-token prompt is ~4 MB of text). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

export function send(
  res: ServerResponse,
  status: number,
  body: string,
  type = "application/json",
  headers: OutgoingHttpHeaders = {},
): void {
  res.writeHead(status, { ...headers, "content-type": type, "content-length": Buffer.byteLength(body) });
  res.end(body);
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on("data", (b: Buffer) => {
      size += b.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpError(413, "Request body too large.", "invalid_request_error"));
        req.destroy();
        return;
      }
      parts.push(b);
    });
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}
