/**
 * How a streamed request ended, in the terms the fault bench judges by. A
 * gateway may fail a request, but never silently:
 * - `done`: HTTP 200 and the stream ended with `data: [DONE]`;
 * - `error_event`: HTTP 200 and an SSE error event (`data: {"error": …}`),
 *   the gateway's honest ending of a stream its backend cut;
 * - `http_error`: a non-200 answer (a 429 passed on, a 502/503...);
 * - `broken`: no answer at all, a transport error, or a stream that stopped
 *   without [DONE] and without an error event (a raw truncation). A client
 *   cannot tell this from a complete answer: it must never happen.
 */
import type { RequestResult } from "../e2e/stream-client";

export const ENDINGS = ["done", "error_event", "http_error", "broken"] as const;
export type Ending = (typeof ENDINGS)[number];

export function endingOf(r: Pick<RequestResult, "outcome" | "status">): Ending {
  if (r.outcome === "ok") return "done";
  if (r.outcome === "lost") return "broken";
  return r.status === 200 ? "error_event" : "http_error";
}
