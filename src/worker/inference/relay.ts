/**
 * Relaying a backend's answer to the client. The body is pulled only as fast
 * as the client reads (no buffering beyond one chunk), each chunk goes
 * through a tap that reads a copy for usage and TTFT, and the end of the
 * relay — done, the upstream failed or went quiet, the client left — is
 * reported exactly once.
 *
 * Honest endings: when an event stream breaks mid-way (the backend died, or
 * sent nothing for `idleMs`), the client gets an SSE `data: {"error": …}`
 * event — what the OpenAI SDKs raise as an APIError — and a clean end of the
 * stream, never a silent truncation. A non-streamed body has no way to say
 * so: the client's read fails instead.
 */
import { deadline } from "../deadline";
import type { Tap } from "./stream-tap";

export type RelayEnd =
  | { readonly kind: "done" }
  | { readonly kind: "stream_error"; readonly message: string }
  | { readonly kind: "idle_timeout"; readonly message: string }
  | { readonly kind: "client_abort" }
  /** The client took none of the bytes handed to it for `stallMs`: cut as its doing, not the backend's. */
  | { readonly kind: "client_stall"; readonly message: string };

export interface RelayHooks {
  /** Called once, when the tap first sees generated content. */
  onFirstContent(at: number): void;
  /** Called exactly once, when the relay is over for any reason. */
  onEnd(end: RelayEnd, tap: Tap): void;
  /**
   * Called each time an answer's event is relayed (the backend's proof of life: backend-progress.ts, Tap.answers).
   * Bytes that complete no event (a trickle), keep-alive comments and error events do not count.
   */
  onRelayed?(at: number): void;
}

export interface RelaySource {
  readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  /** A chunk already read from `reader` (the first bytes of a 2xx answer), relayed first. */
  readonly first: Uint8Array | undefined;
  /** Aborted when the relay stops early (the client left, the upstream went quiet). */
  readonly abort: AbortController;
  /** The body is an SSE stream: a broken one ends with an error event. */
  readonly eventStream: boolean;
  /** Longest wait for the next chunk, ms. */
  readonly idleMs: number;
  /**
   * Longest the relay waits on the client to take what it was handed (ms; CLIENT_STALL_TIMEOUT_MS). The body is
   * pulled (highWaterMark 0): workerd asks for the next chunk only when the last one was written on to the
   * client, so a client that holds its connection and reads nothing leaves the relay with no pull, the backend's
   * next bytes unread, and the backend's in-flight slot held until LEASE_TTL_SECONDS. Undefined: no bound.
   */
  readonly stallMs?: number;
  /**
   * The client's signal (request.signal, enable_request_signal): it left. workerd does not always cancel a
   * JS-stream body when its client disconnects (cloudflare/workerd#6832), while the signal fires; without
   * this, the upstream was aborted (upstream.ts listens too) but the relay never ended: the lease was held
   * until LEASE_TTL_SECONDS, or a read pending at that moment failed and was blamed on the backend.
   */
  readonly client?: AbortSignal;
}

const UTF8 = new TextEncoder();

/**
 * After `data: [DONE]` the body should end at once (and normally does, so the connection is reused). One held
 * open past this is closed as the complete answer it is: the OpenAI SDKs read a stream to its end after
 * [DONE], so they would wait out the idle deadline, then get an "incomplete" error event after a complete
 * answer, and the backend a fault.
 */
const AFTER_DONE_MS = 1000;

/** The SSE event a broken stream ends with: OpenAI's error shape, which the SDKs raise. */
export function sseErrorEvent(code: string, message: string, midEvent: boolean): Uint8Array {
  const body = JSON.stringify({ error: { message, type: "server_error", param: null, code } });
  // A cut inside an event: end its line and dispatch it first, so ours parses on its own.
  return UTF8.encode(`${midEvent ? "\n\n" : ""}data: ${body}\n\n`);
}

class ClientStall extends Error {
  override readonly name = "ClientStall";
}

class IdleTimeout extends Error {
  override readonly name = "IdleTimeout";
}

/** The next chunk within `ms` (what is left of the idle deadline `idleMs`), or IdleTimeout. */
function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  ms: number,
  idleMs: number,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  return deadline(reader.read(), ms, () => {
    throw new IdleTimeout(`nothing to relay from the backend for ${idleMs} ms`);
  });
}

export function relay(source: RelaySource, tap: Tap, hooks: RelayHooks): ReadableStream<Uint8Array> {
  const { reader, abort, idleMs, stallMs } = source;
  let pendingFirst = source.first;
  let ended = false;
  let out: ReadableStreamDefaultController<Uint8Array> | undefined;
  /**
   * The write-stall clock: armed while the relay holds bytes the client has not taken (from the start, when the
   * first chunk waits, and after each pull that handed something on), cleared when the client pulls again. A
   * pull waiting on the backend never runs it: that is the idle deadline's time.
   */
  let stall: ReturnType<typeof setTimeout> | undefined;
  const disarmStall = () => {
    if (stall !== undefined) clearTimeout(stall);
    stall = undefined;
  };
  const armStall = () => {
    disarmStall();
    if (stallMs === undefined || ended) return;
    stall = setTimeout(onClientStall, stallMs);
  };
  const onClientStall = () => {
    stall = undefined;
    if (ended) return;
    const message = `the client took no bytes for ${stallMs} ms`;
    const reason = new ClientStall(message);
    abort.abort(reason);
    reader.cancel(reason).catch(() => {});
    end({ kind: "client_stall", message });
    // The client is not reading: its stream fails rather than carry an error event it would never see.
    try {
      out?.error(reason);
    } catch {}
  };
  const onClientGone = () => {
    const reason = new Error("client disconnected");
    abort.abort(reason);
    reader.cancel(reason).catch(() => {});
    end({ kind: "client_abort" });
  };
  const end = (e: RelayEnd) => {
    if (ended) return;
    ended = true;
    disarmStall();
    source.client?.removeEventListener("abort", onClientGone);
    hooks.onEnd(e, tap);
  };
  if (source.client?.aborted === true) onClientGone();
  else source.client?.addEventListener("abort", onClientGone, { once: true });
  /**
   * How long the relay has waited on the backend since the last event with data went out (ms): the idle
   * deadline's clock. Only time spent in reads counts, so a client that is slow to read is not the backend's
   * silence, and it runs on across pulls that forwarded only keep-alive comments or part of an event.
   */
  let waited = 0;
  /**
   * Hands one upstream chunk through the tap: "event" when something was enqueued that holds an event with
   * data, "comment" when only other bytes were (keep-alive comments, blank lines), "none" when nothing was.
   */
  const forward = (
    chunk: Uint8Array,
    controller: ReadableStreamDefaultController<Uint8Array>,
  ): "event" | "comment" | "none" => {
    const seen = tap.sawContent;
    const events = tap.events;
    const answers = tap.answers;
    const out = tap.push(chunk);
    if (!seen && tap.sawContent) hooks.onFirstContent(Date.now());
    if (tap.answers > answers) hooks.onRelayed?.(Date.now());
    if (out === null || out.byteLength === 0) return "none";
    controller.enqueue(out);
    return tap.events > events ? "event" : "comment";
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        out = controller;
        armStall();
      },
      async pull(controller) {
        // The client took what it had: the stall clock stops until this pull hands something on.
        disarmStall();
        try {
          await pullOnce(controller);
        } finally {
          armStall();
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

  async function pullOnce(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    try {
      if (pendingFirst !== undefined) {
        const chunk = pendingFirst;
        pendingFirst = undefined;
        if (forward(chunk, controller) !== "none") return;
      }
      // Loop until something is forwarded: in strip mode a chunk may hold only half an event. The idle
      // deadline counts from the last event forwarded, not from the last byte read: a backend trickling an
      // event a byte at a time, never idle between reads, is otherwise relayed (or rather not) for ever;
      // nor from a keep-alive comment, which a proxy or an SSE server sends on its own while the engine
      // behind it is hung.
      for (;;) {
        const doneBefore = tap.sawDone;
        const waitMs = doneBefore ? Math.min(idleMs, AFTER_DONE_MS) : idleMs;
        const readAt = Date.now();
        const { done, value } = await readWithin(reader, Math.max(1, waitMs - waited), waitMs).finally(() => {
          waited += Date.now() - readAt;
        });
        // The client left while this read waited: its cancel resolved the read as done, and that is no end.
        if (ended) throw new Error("client disconnected");
        if (done) {
          const rest = tap.end();
          if (rest !== null && rest.byteLength > 0) controller.enqueue(rest);
          if (source.eventStream && tap.endedInsideEvent) {
            // A clean end inside a cut event is a cut stream: the client's parser would drop the event
            // silently, so it is told, and the request counts as broken off.
            const message = "the body ended inside an event";
            const text = "The backend's stream ended inside an event; the answer is incomplete.";
            controller.enqueue(sseErrorEvent("upstream_stream_error", text, true));
            controller.close();
            end({ kind: "stream_error", message });
            return;
          }
          if (!source.eventStream && tap.endedInsideEvent) {
            // A JSON body that ends cleanly before its JSON does: as for one whose connection breaks, the
            // client's read fails (its SDK retries that; a parse error it would not), and it counts broken.
            const message = "the body ended inside its JSON";
            controller.error(new Error(message));
            end({ kind: "stream_error", message });
            return;
          }
          controller.close();
          end({ kind: "done" });
          return;
        }
        // Past [DONE] nothing is the answer: not relayed, and no reset of the wait, so a body that goes on
        // after it (events every few hundred ms, never idle) ends within AFTER_DONE_MS of it as done. Relayed,
        // it ran on as long as the backend sent: the OpenAI Python SDK reads a stream to its end after
        // [DONE], so the client's loop did not end either.
        if (doneBefore) continue;
        const forwarded = forward(value, controller);
        if (forwarded === "event") waited = 0;
        if (forwarded !== "none") return;
      }
    } catch (err) {
      if (ended) {
        // The client left while this read waited (the abort above failed it): nobody to tell.
        try {
          controller.error(err);
        } catch {}
        return;
      }
      const idle = err instanceof IdleTimeout;
      // After [DONE], or a JSON body's closed value, the answer is whole, whatever ends its body: held open
      // (idle), or cut (a proxy that resets the connection, a content-length past the bytes sent). An error
      // there would follow a complete answer, and the request count as broken off: a fault of a backend
      // that answered in full.
      if (tap.wholeSoFar()) {
        abort.abort(err);
        reader.cancel(err).catch(() => {});
        const rest = tap.end();
        if (rest !== null && rest.byteLength > 0) controller.enqueue(rest);
        controller.close();
        end({ kind: "done" });
        return;
      }
      const message = err instanceof Error ? err.message : String(err);
      abort.abort(err);
      reader.cancel(err).catch(() => {});
      if (source.eventStream) {
        const code = idle ? "upstream_idle_timeout" : "upstream_stream_error";
        const text = idle
          ? `The backend stopped sending (${message}); the answer is incomplete.`
          : "The backend's stream broke off; the answer is incomplete.";
        controller.enqueue(sseErrorEvent(code, text, tap.midEvent));
        controller.close();
      } else {
        controller.error(err);
      }
      end(idle ? { kind: "idle_timeout", message } : { kind: "stream_error", message });
    }
  }
}
