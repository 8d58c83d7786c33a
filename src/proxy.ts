/**
 * Forwarding to a backend and relaying its answer. The client's credentials
 * never leave the gateway: the upstream request carries only the backend's
 * own key. The response body is relayed chunk by chunk as it arrives; a tap
 * reads a copy for usage and TTFT; the end of the relay (done, upstream
 * error, or client gone) is reported exactly once.
 */
import type { BackendConfig } from "./config";
import type { Tap } from "./stream-tap";

export type UpstreamAttempt =
  | { readonly kind: "response"; readonly res: Response; readonly startedAt: number }
  | { readonly kind: "connect_error"; readonly message: string; readonly startedAt: number };

/** Statuses that mean "this backend cannot take the request now": retried once elsewhere if no byte was sent. */
export function isRetryableStatus(status: number): boolean {
  return status === 502 || status === 503 || status === 504;
}

export async function callBackend(
  backend: BackendConfig,
  path: string,
  body: string,
  requestId: string,
  signal: AbortSignal,
): Promise<UpstreamAttempt> {
  const headers = new Headers({ "content-type": "application/json", "x-request-id": requestId });
  if (backend.apiKey !== undefined) headers.set("authorization", `Bearer ${backend.apiKey}`);
  const startedAt = Date.now();
  try {
    const res = await fetch(`${backend.url}${path}`, { method: "POST", headers, body, signal });
    return { kind: "response", res, startedAt };
  } catch (err) {
    // The message names the failure class (refused, reset, DNS...), never a secret: the url is ours.
    return { kind: "connect_error", message: err instanceof Error ? err.message : String(err), startedAt };
  }
}

export type RelayEnd =
  | { readonly kind: "done" }
  | { readonly kind: "stream_error"; readonly message: string }
  | { readonly kind: "client_abort" };

export interface RelayHooks {
  /** Called once, when the tap first sees generated content. */
  onFirstContent(at: number): void;
  /** Called exactly once, when the relay is over for any reason. */
  onEnd(end: RelayEnd, tap: Tap): void;
}

/**
 * A stream that pulls the upstream body only as fast as the client reads
 * (no buffering beyond one chunk), hands each chunk through the tap, and
 * aborts the upstream fetch when the client goes away.
 */
export function relay(
  upstream: ReadableStream<Uint8Array>,
  tap: Tap,
  abort: AbortController,
  hooks: RelayHooks,
): ReadableStream<Uint8Array> {
  const reader = upstream.getReader();
  let ended = false;
  const end = (e: RelayEnd) => {
    if (ended) return;
    ended = true;
    hooks.onEnd(e, tap);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          // Loop until something is forwarded: in strip mode a chunk may hold only half an event.
          for (;;) {
            const { done, value } = await reader.read();
            if (done) {
              const rest = tap.end();
              if (rest !== null && rest.byteLength > 0) controller.enqueue(rest);
              controller.close();
              end({ kind: "done" });
              return;
            }
            const seen = tap.sawContent;
            const out = tap.push(value);
            if (!seen && tap.sawContent) hooks.onFirstContent(Date.now());
            if (out !== null && out.byteLength > 0) {
              controller.enqueue(out);
              return;
            }
          }
        } catch (err) {
          if (ended) return;
          controller.error(err);
          end({ kind: "stream_error", message: err instanceof Error ? err.message : String(err) });
        }
      },
      cancel(reason) {
        abort.abort(reason);
        reader.cancel(reason).catch(() => {});
        end({ kind: "client_abort" });
      },
    },
    { highWaterMark: 0 },
  );
}
