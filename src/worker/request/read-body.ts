/**
 * A request body read as a stream with a running byte count. A body that
 * declares a content-length above the cap is refused before any of it is
 * read; one that does not (chunked) is refused as soon as its count passes
 * the cap, and the rest of it is never read: the stream is cancelled. Each
 * chunk can be inspected as it arrives (the JSON shape check does), so a
 * body can also be refused for what its first bytes hold. A stream that
 * fails before its end (the client left mid-upload, or sent less than its
 * content-length) is the request's fault: 400 incomplete_body; one that
 * stops arriving, with nothing for `idleMs`, a 408 request_timeout; so does
 * one not whole within `totalMs` however its pieces are spaced (a trickle).
 */

import { SETTINGS } from "../../routing/defaults";
import { deadline } from "../deadline";
import {
  type GatewayError,
  incompleteBody,
  requestBodyTimeout,
  requestTimeout,
  requestTooLarge,
} from "../errors";
import { BODY_IDLE_MS } from "./request-limits";

export async function readBodyBytes(
  req: Request,
  maxBytes: number,
  onChunk?: (chunk: Uint8Array) => void,
  idleMs: number = BODY_IDLE_MS,
  totalMs: number = SETTINGS.REQUEST_BODY_TIMEOUT_MS.default,
): Promise<Uint8Array> {
  const endAt = Date.now() + totalMs;
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw requestTooLarge(maxBytes);
  if (req.body === null) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      // Each wait is the idle deadline, or what is left of the total one when that ends first.
      const left = Math.max(0, endAt - Date.now());
      const { done, value } =
        left <= idleMs
          ? await readWithin(reader, left, () => requestBodyTimeout(totalMs))
          : await readWithin(reader, idleMs, () => requestTimeout(idleMs));
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) throw requestTooLarge(maxBytes);
      onChunk?.(value);
      chunks.push(value);
    }
  } catch (err) {
    // Stop the sender: whatever is still in flight is discarded, not buffered.
    reader.cancel().catch(() => {});
    throw err;
  }
  return concat(chunks, total);
}

/** `chunks` as one array of `total` bytes (the one chunk itself when there is only one). */
export function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** The next chunk; incomplete_body if the stream fails, `late()` if nothing comes for `ms`. */
function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  ms: number,
  late: () => GatewayError,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  return deadline(
    reader.read().catch(() => Promise.reject(incompleteBody())),
    ms,
    () => {
      throw late();
    },
  );
}
