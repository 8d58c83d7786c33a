/**
 * One attempt at a backend, up to the point where the client could be
 * answered: every wait has a deadline, and nothing has reached the client
 * yet, so a failed attempt can still be retried elsewhere.
 *
 * - A streamed request must get its response headers within `connectMs`
 *   (vLLM and SGLang send them when they accept the request) and, when the
 *   answer is a 2xx event stream, its first event within `firstByteMs` after
 *   that: the first chunk is read here, before the client sees a header.
 * - A non-streamed request gets its headers with its whole answer: it must
 *   arrive within `responseMs`; a 2xx body's first bytes within `firstByteMs`
 *   after the headers (an empty 2xx body, streamed or not, is a failure).
 * The client's credentials never leave the gateway: the upstream request
 * carries only the backend's own key.
 */
import { backendAuthorization, isRedirect } from "../backend-http";
import type { BackendConfig, Deadlines } from "../config";
import { deadline } from "../deadline";
import { concat } from "../request/read-body";
import { progressedSince } from "./backend-progress";
import { errorAnswerEvent } from "./error-answer";
import { startsAsJson, startsLikeEventStream } from "./sniff-event-stream";

/** Why an attempt produced no usable response. */
export type AttemptFailure = "connect_error" | "timeout" | "client_abort";

export type Attempt =
  | {
      readonly kind: "response";
      readonly res: Response;
      /** Date.now() when the request was sent. */
      readonly startedAt: number;
      /**
       * The response's retry-after, ms, read once when its headers came: whoever judges the attempt
       * (busy or a fault) and whoever reports how long to keep its backend out sees the same wait, even
       * when an HTTP date passes in between (the buffering of an error body before a retry).
       */
      readonly retryAfterMs?: number;
      /** Aborts the upstream request (the client left, a deadline passed). */
      readonly abort: AbortController;
      /** The body's reader, with the first chunk already read (into `first`) for a 2xx answer. */
      readonly reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
      readonly first: Uint8Array | undefined;
    }
  | {
      readonly kind: "failed";
      readonly failure: AttemptFailure;
      readonly message: string;
      readonly startedAt: number;
    };

export interface AttemptOptions {
  readonly stream: boolean;
  readonly deadlines: Deadlines;
  /** The client's signal: it left, so the backend should stop working for it. */
  readonly client: AbortSignal;
  /** Where to ask whether the backend is answering other isolates' requests (firstBytes); absent: ask nobody. */
  readonly progress?: ProgressSource;
}

/**
 * Another view of a backend's progress than this isolate's own: the pool's RouterDO, which hears every
 * isolate's lease ends (attempts.ts wires it: router-client.ts askProgress). `refresh` brings what it knows
 * into backend-progress.ts (learnProgress) and must never reject; it is asked `leadMs` before a first-bytes
 * deadline, so its answer is in by then or not used: it never moves a deadline.
 */
export interface ProgressSource {
  refresh(backendId: string): Promise<void>;
  /** How long before the deadline to ask (ROUTER_TIMEOUT_MS), at most half the window. */
  readonly leadMs: number;
}

class DeadlineExceeded extends Error {
  override readonly name = "DeadlineExceeded";
}

/** Resolves with `p`, or rejects with DeadlineExceeded (and aborts `abort`) after `ms`. */
function within<T>(p: Promise<T>, ms: number, abort: AbortController, what: string): Promise<T> {
  return deadline(p, ms, () => {
    const e = new DeadlineExceeded(`${what} took longer than ${ms} ms`);
    abort.abort(e);
    throw e;
  });
}

const STILL_WAITING = Symbol("still waiting");

/**
 * A 2xx answer's first bytes (a stream's first event: queueing plus prefill) within `firstByteMs`, or later
 * while the backend is seen answering other requests: each time the deadline passes, the wait goes on for
 * another `firstByteMs` if answer bytes came from this backend during the last one (busy, not hung:
 * backend-progress.ts), and never past `endAt` (the request's whole budget, LEASE_TTL_SECONDS, which also
 * bounds a non-streamed answer). A backend that sent nothing to anyone for `firstByteMs` is timed out, as
 * before.
 *
 * This isolate sees only the streams it relays. When it has seen nothing from the backend in a window,
 * `progress` (the RouterDO) is asked `leadMs` before the window ends, once, whether another isolate's request
 * there finished meanwhile; what it says by the deadline counts like what this isolate saw. An answer that is
 * late, or none (slow, down, throwing), changes nothing: the deadline is the same as without it.
 */
export async function firstBytes<T>(
  read: Promise<T>,
  backendId: string,
  firstByteMs: number,
  endAt: number,
  abort: AbortController,
  what: string,
  progress?: ProgressSource,
): Promise<T> {
  const waitStart = Date.now();
  let waitedFrom = waitStart;
  for (;;) {
    const ms = Math.max(0, Math.min(firstByteMs, endAt - waitedFrom));
    const lead = progress === undefined ? 0 : Math.max(0, Math.min(progress.leadMs, ms / 2));
    let r = await deadline(read, ms - lead, () => STILL_WAITING);
    if (r !== STILL_WAITING) return r as T;
    if (lead > 0) {
      // Not awaited: the answer lands in backend-progress.ts if it comes before the deadline, unused if later.
      if (!progressedSince(backendId, waitedFrom))
        void (async () => progress!.refresh(backendId))().catch(() => {});
      r = await deadline(read, Math.max(0, waitedFrom + ms - Date.now()), () => STILL_WAITING);
      if (r !== STILL_WAITING) return r as T;
    }
    const now = Date.now();
    if (now >= endAt || !progressedSince(backendId, waitedFrom)) {
      const e = new DeadlineExceeded(
        now >= endAt
          ? `${what} did not come before the request's deadline (LEASE_TTL_SECONDS)`
          : waitedFrom > waitStart
            ? `${what} took longer than ${now - waitStart} ms, the last ${firstByteMs} ms with nothing from the backend for any request`
            : `${what} took longer than ${firstByteMs} ms`,
      );
      abort.abort(e);
      throw e;
    }
    waitedFrom = now;
  }
}

/** An event stream's opening that holds nothing but comments (`: ping`) and line breaks, a BOM allowed. */
const ONLY_COMMENTS = /^\uFEFF?(?:[\r\n]|:[^\r\n]*)*$/;
/** The most of an opening of comments held while waiting for the first event; past it, it is relayed. */
const MAX_COMMENTS_BYTES = 64 * 1024;

/**
 * An event stream's first event: the first read, and as many more as it takes while what came holds only
 * comments. Many SSE servers and proxies send a keep-alive comment on their own every few seconds
 * (mistral.rs every 10 s by default, sse-starlette, axum's KeepAlive) whether or not the engine behind them works: that is not a first event,
 * and taken as one it met the first-event deadline of a request on a hung engine and let the idle deadline
 * run from there. What came is handed on whole; a body that ends with no event is done (an empty answer).
 */
async function firstEvent(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  const parts: Uint8Array[] = [];
  let bytes = 0;
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const r = await reader.read();
    // Comments, then the end: no event at all.
    if (r.done) return r;
    parts.push(r.value);
    bytes += r.value.byteLength;
    text += decoder.decode(r.value, { stream: true });
    if (!ONLY_COMMENTS.test(text) || bytes > MAX_COMMENTS_BYTES)
      return { done: false, value: concat(parts, bytes) };
  }
}

export function isEventStream(res: Response): boolean {
  return (res.headers.get("content-type") ?? "").includes("text/event-stream");
}

/**
 * A success status with a web page: what a login wall, a captive portal or a misrouted proxy in front of
 * the engine sends. No OpenAI-compatible server answers an API call with HTML, and relaying it would hand
 * the client a 200 its SDK cannot parse while the backend counts as healthy: it is a backend fault.
 */
function htmlPageOf(res: Response): string | undefined {
  const type = (res.headers.get("content-type") ?? "").toLowerCase();
  return res.ok && (type.startsWith("text/html") || type.startsWith("application/xhtml+xml"))
    ? type
    : undefined;
}

/**
 * A 2xx answer in the other form than the one asked for, or undefined. A streamed request answered with a
 * JSON body (neither its content-type nor its first bytes an event stream) reads in the OpenAI SDKs as a
 * stream with no event: an empty answer and no error (openai-node 7.55 yields 0 chunks). A non-streamed
 * request answered with an event stream reads as a string where a completion object was expected. Either
 * way the client's SDK cannot use it while the backend counted healthy: like an HTML page, the backend's
 * fault, and retried. So is a JSON body under an event-stream label, whichever was asked for.
 */
function formMismatch(
  stream: boolean,
  eventStream: boolean,
  first: Uint8Array,
  res: Response,
): string | undefined {
  const sse = startsLikeEventStream(first);
  const type = (res.headers.get("content-type") ?? "none").slice(0, 60);
  // A JSON value under an event-stream label is no event stream either (an SSE parser finds no event in it).
  if (stream && ((!eventStream && !sse) || startsAsJson(first)))
    return `answered a streamed request with a body that is not an event stream (content-type ${type})`;
  if (!stream && (sse || eventStream))
    return `answered a request with "stream": false with an event stream (content-type ${type})`;
  return undefined;
}

/**
 * The answer's content-coding when fetch has not decoded it (it decodes gzip and br): relayed, the client got
 * compressed bytes under a 200 and no Content-Encoding (only chosen headers are passed on), and the usage
 * chunk went unseen. Asked for identity, a server should not send one; a server that does is misconfigured.
 */
function unreadableCoding(res: Response): string | undefined {
  const coding = (res.headers.get("content-encoding") ?? "").trim().toLowerCase();
  return coding === "" || coding === "identity" || coding === "gzip" || coding === "br"
    ? undefined
    : coding.slice(0, 40);
}

export async function callBackend(
  backend: BackendConfig,
  path: string,
  body: string,
  upstreamRequestId: string,
  opts: AttemptOptions,
): Promise<Attempt> {
  const headers = new Headers({
    "content-type": "application/json",
    // No compression, please: the answer is read as it streams, and a backend on the fleet's network gains
    // nothing from it. Without this header any coding is acceptable (RFC 9110 §12.5.3).
    "accept-encoding": "identity",
    "x-request-id": upstreamRequestId,
    ...backendAuthorization(backend.apiKey),
  });
  const abort = new AbortController();
  const onClientGone = () => abort.abort(new Error("client disconnected"));
  if (opts.client.aborted) onClientGone();
  else opts.client.addEventListener("abort", onClientGone, { once: true });
  const startedAt = Date.now();
  const failed = (err: unknown): Attempt => {
    abort.abort();
    const failure: AttemptFailure = opts.client.aborted
      ? "client_abort"
      : err instanceof DeadlineExceeded
        ? "timeout"
        : "connect_error";
    // The message names the failure class (refused, reset, deadline...), never a secret: the url is ours.
    return { kind: "failed", failure, message: err instanceof Error ? err.message : String(err), startedAt };
  };
  const emptyBody = (status: number) =>
    failed(new Error(`answered ${status} with an empty body, not an API response`));
  const { connectMs, firstByteMs, responseMs } = opts.deadlines;
  let res: Response;
  try {
    res = await within(
      // Never followed: a redirect would carry the client's prompt to an address BACKENDS never named (workerd
      // drops our Authorization on a cross-origin hop, not the body), and a 301/302 turns the POST into a GET.
      fetch(`${backend.url}${path}`, {
        method: "POST",
        headers,
        body,
        signal: abort.signal,
        redirect: "manual",
      }),
      opts.stream ? connectMs : responseMs,
      abort,
      opts.stream ? "response headers" : "the response",
    );
  } catch (err) {
    return failed(err);
  }
  const answered = { res, startedAt, abort, ...retryAfterOf(res) };
  const page = htmlPageOf(res);
  if (page !== undefined) {
    res.body?.cancel().catch(() => {});
    return failed(new Error(`answered ${res.status} with an HTML page (${page}), not an API response`));
  }
  const coding = unreadableCoding(res);
  if (coding !== undefined) {
    res.body?.cancel().catch(() => {});
    return failed(new Error(`answered in a content-coding the gateway cannot read (${coding})`));
  }
  if (isRedirect(res.status)) {
    res.body?.cancel().catch(() => {});
    // Where it points is not said: the client reads this message, and backend addresses are not for clients.
    return failed(
      new Error(`answered ${res.status}, a redirect: its BACKENDS url must be the server's own address`),
    );
  }
  // Relayed, a refusal of the gateway's key told every client routed there that its own key was wrong (the
  // SDKs raise AuthenticationError), and the backend, never blamed, stayed in rotation: its fault, retried.
  // Only a 401: a 403 is also what a web application firewall in front of a backend answers for a request's
  // content (a prompt quoting SQL or a script tag), so a fault for it let one client's prompts eject healthy
  // backends for everybody. A 403 is judged by its retry instead, as a 500 is (attempts.ts failureOf).
  if (res.status === 401) {
    res.body?.cancel().catch(() => {});
    return failed(
      new Error(`refused the gateway's credentials (${res.status}): check its apiKey in BACKENDS`),
    );
  }
  if (res.body === null) {
    // No body at all (a 204 or 205 by the Fetch standard): on a success, the same fault as an empty one.
    if (res.ok) return emptyBody(res.status);
    return { kind: "response", ...answered, reader: undefined, first: undefined };
  }
  const reader = res.body.getReader();
  // An error answer is relayed (or buffered for a retry) as it comes; a success is read up to its first
  // bytes before the client sees a header, so that one without any is still a failure we can retry.
  if (!res.ok) return { kind: "response", ...answered, reader, first: undefined };
  const eventStream = isEventStream(res);
  try {
    const { done, value } = await firstBytes(
      // A streamed request's answer may be an event stream under another content-type (respond.ts sniffs it).
      eventStream || opts.stream ? firstEvent(reader) : reader.read(),
      backend.id,
      firstByteMs,
      startedAt + responseMs,
      abort,
      eventStream ? "the first event" : "the first bytes of the body",
      opts.progress,
    );
    // A 200 with nothing in it (a proxy's empty answer, an engine that closed before its first event) parses
    // in no SDK and would count as a success of the backend: like an HTML page, it is the backend's fault.
    if (done) return emptyBody(res.status);
    // A JSON error object for a streamed request: this request's answer (refused on its content), handed on as
    // the error event the client's SDK raises, and no fault of the backend (error-answer.ts).
    if (opts.stream && startsAsJson(value)) {
      const error = await errorAnswerEvent(reader, value, opts.deadlines.idleMs, startedAt + responseMs);
      if (error !== undefined) return { kind: "response", ...answered, reader, first: error };
    }
    const mismatch = formMismatch(opts.stream, eventStream, value, res);
    if (mismatch !== undefined) {
      reader.cancel().catch(() => {});
      return failed(new Error(mismatch));
    }
    return { kind: "response", ...answered, reader, first: value };
  } catch (err) {
    reader.cancel().catch(() => {});
    return failed(err);
  }
}

/** Statuses retried on another backend (before any byte reached the client). */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 500 || status === 502 || status === 503 || status === 504;
}

/** An attempt's retry-after field (Attempt.retryAfterMs): the header, read now, when the headers came. */
export function retryAfterOf(res: Response): { retryAfterMs?: number } {
  const ms = retryAfterMs(res, Date.now());
  return ms !== undefined ? { retryAfterMs: ms } : {};
}

/**
 * A backend's retry-after header in ms: delta-seconds or an HTTP date;
 * undefined when absent or unreadable.
 */
export function retryAfterMs(res: Response, now: number): number | undefined {
  const v = res.headers.get("retry-after");
  if (v === null) return undefined;
  const t = v.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000);
  const at = Date.parse(t);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
