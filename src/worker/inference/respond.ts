/**
 * Step 3 of an inference request: answer the client from the final leg and
 * report how it ended — once, when it is really over (after the last
 * streamed byte, a broken stream, or the client leaving): the lease is
 * ended (or a local decision observed), and the request's log line written.
 */
import type { Context } from "hono";
import type { RoutedCount, RouteRequest } from "../../routing/types";
import type { GatewayEnv } from "../app-types";
import { backendErrorBodyLost, backendTimeout, backendUnreachable, errorBody } from "../errors";
import type { RequestLogFields } from "../log";
import { MAX_THROTTLE_MS } from "../router/outcomes";
import { noticeFirstToken, noticeRelay, type RouteCall, reportOutcome } from "../router/router-client";
import type { CompleteInput, FailureKind } from "../router/router-rpc";
import type { LegsResult } from "./attempts";
import { failureOf } from "./attempts";
import { noteProgress } from "./backend-progress";
import type { InferenceRequest } from "./inference-request";
import { type RelayEnd, relay } from "./relay";
import type { RequestOver } from "./request-over";
import { startsLikeEventStream } from "./sniff-event-stream";
import { JsonTap, SseTap, type Tap } from "./stream-tap";
import { isEventStream } from "./upstream";
import { believedUsage } from "./usage-bounds";

/**
 * Headers of the backend's response that the client gets (others — cookies, server, lengths — do not pass).
 * A `retry-after` is told as the gateway reads it (retryAfterHeader), not as sent.
 */
const PASSED_HEADERS = ["content-type", "openai-processing-ms", "x-ratelimit-remaining-requests"];

/**
 * The backend's retry-after as the client is told it: delta-seconds, at most what the gateway itself believes
 * (MAX_THROTTLE_MS, the longest it keeps a backend out for one); none when it was absent or unreadable.
 * Relayed as sent, `retry-after: 99999999` (a proxy's) made the OpenAI Python SDK give up at once (it does not
 * retry past 120 s, `_should_retry`) while the gateway would route to that backend again within a minute.
 */
export function retryAfterHeader(retryAfterMs: number | undefined): string | undefined {
  if (retryAfterMs === undefined) return undefined;
  return String(Math.ceil(Math.min(Math.max(0, retryAfterMs), MAX_THROTTLE_MS) / 1000));
}

/** Status for a client that left before its answer (nginx's "client closed request"); nobody reads it. */
const CLIENT_CLOSED = 499;

/**
 * The log's figures of the count routing used where the bound changed the request's (RouteDecision.routed),
 * each only when it differs: the line's promptTokens and maxTokens stay the request's, these say what its
 * backend was charged.
 */
function routedFields(
  routed: RoutedCount | undefined,
  sent: RouteRequest,
): Pick<RequestLogFields, "routedPromptTokens" | "routedMaxTokens"> {
  if (routed === undefined) return {};
  return {
    ...(routed.promptTokens !== sent.promptTokens ? { routedPromptTokens: routed.promptTokens } : {}),
    ...(routed.outputTokens !== sent.outputTokens ? { routedMaxTokens: routed.outputTokens } : {}),
  };
}

export function respond(
  c: Context<GatewayEnv>,
  call: RouteCall,
  request: InferenceRequest,
  legs: LegsResult,
  client: AbortSignal,
  alive: RequestOver,
): Response {
  const log = c.get("log");
  const { final } = legs;
  const { upstreamRequestId } = request;
  const { decision, attempt } = final;
  log.set({
    backend: decision.backendId,
    policy: decision.policy,
    reason: decision.reason,
    cachedTokensExpected: decision.expectedCachedTokens,
    cachedTokensAvailable: decision.availableCachedTokens,
    inflightAtDecision: decision.inflightAtDecision,
    ...routedFields(decision.routed, request.route),
    ...(decision.via === "router" ? { arm: decision.arm } : {}),
    ...(decision.via === "router" && decision.shadow !== undefined
      ? { shadowBackend: decision.shadow.backendId, cachedTokensShadow: decision.shadow.expectedCachedTokens }
      : {}),
    ...(legs.retriedFrom !== undefined ? { retriedFrom: legs.retriedFrom } : {}),
    ...(legs.busyRetriedFrom !== undefined ? { busyRetriedFrom: legs.busyRetriedFrom } : {}),
    ...(legs.retryRefused === true ? { retryRefused: true } : {}),
    ...(upstreamRequestId !== c.get("requestId") ? { upstreamRequestId } : {}),
  });
  // Called exactly once per request, on every path below (the relay's onEnd included): the report is in
  // waitUntil by the time the request's context is let go.
  const report = (outcome: CompleteInput) => {
    if (!final.reported) reportOutcome(call, decision, outcome);
    alive.over();
  };

  if (attempt.kind === "failed") {
    report({ ok: false, failure: attempt.failure });
    log.set({ failure: attempt.failure });
    if (attempt.failure === "client_abort") {
      log.set({ aborted: true });
      return new Response(null, { status: CLIENT_CLOSED });
    }
    const detail = `backend '${decision.backendId}': ${attempt.message}`;
    throw attempt.failure === "timeout" ? backendTimeout(detail) : backendUnreachable(detail);
  }

  const res = attempt.res;
  const headers = new Headers();
  for (const h of PASSED_HEADERS) {
    const v = res.headers.get(h);
    if (v !== null) headers.set(h, v);
  }
  const retryAfterValue = retryAfterHeader(attempt.retryAfterMs);
  if (retryAfterValue !== undefined) headers.set("retry-after", retryAfterValue);
  headers.set("x-prefix-gateway-backend", decision.backendId);
  headers.set("x-prefix-gateway-route", decision.reason);
  headers.set("x-prefix-gateway-cached-tokens-expected", String(decision.expectedCachedTokens));
  // The id the backend knows this request by (its logs, vLLM's request id): the client's own x-request-id
  // made unique, or the gateway's.
  headers.set("x-prefix-gateway-upstream-request-id", upstreamRequestId);
  // An event stream by its header, or — for a streamed request — by its first bytes: a proxy that rewrote
  // the content-type must not make the relay miss the usage chunk the gateway added (it is then stripped).
  const declared = isEventStream(res);
  const sniffed =
    !declared && request.stream && attempt.first !== undefined && startsLikeEventStream(attempt.first);
  const eventStream = declared || sniffed;
  // The client's SDK or EventSource reads it as what it is.
  if (sniffed) headers.set("content-type", "text/event-stream");
  if (request.stream && res.ok) headers.set("cache-control", "no-cache");

  const failure = failureOf(attempt);
  const retryAfter = failure === "throttled" ? attempt.retryAfterMs : undefined;
  const startedAt = c.get("startedAt");
  let firstContentAt: number | undefined;
  const tap: Tap = eventStream ? new SseTap(request.strip) : new JsonTap();
  const kvCacheTokens = c.get("config").backends.find((b) => b.id === decision.backendId)?.kvCacheTokens;
  const onEnd = (end: RelayEnd, t: Tap) => {
    // What the router and the pool's counters learn: only counts this request could have (usage-bounds.ts).
    // The log line keeps what the engine said.
    const usage =
      kvCacheTokens === undefined
        ? t.usage
        : believedUsage(t.usage, {
            ...(request.route.outputTokens !== undefined ? { maxTokens: request.route.outputTokens } : {}),
            sequences: request.sequences,
            prompts: request.route.prompts ?? 1,
            kvCacheTokens,
          });
    // A client that stopped taking bytes is gone as far as its backend is concerned: no fault of the backend.
    const clientLeft = end.kind === "client_abort" || end.kind === "client_stall";
    const ended: FailureKind | undefined = clientLeft
      ? "client_abort"
      : end.kind === "stream_error"
        ? "stream_error"
        : end.kind === "idle_timeout"
          ? "timeout"
          : failure;
    // A stream the client left after content was computed all the same: the prefix is cached there.
    const ok = res.ok && (end.kind === "done" || (clientLeft && t.sawContent));
    // An error object inside a 2xx is a failed request; whose fault is unknown (the engine, or a request it
    // cannot serve), so it is no failure kind and no fault of the backend, like a 500 seen on two backends.
    // (An error answer's own body is an error object too: that is its status, not this flag.)
    const backendError = res.ok && t.sawError;
    const now = Date.now();
    // A whole JSON answer proves the engine is working (an event stream's answers were noted as relayed).
    if (!eventStream && ok && !backendError) noteProgress(decision.backendId, now);
    report({
      ok,
      ...(backendError ? { backendError: true as const } : {}),
      // A /v1/completions batch (route.prompts > 1): its usage is summed over the prompts and its first token
      // is the first prompt's, so none of it is one request's figure for the router (outcomes.ts).
      ...(request.route.prompts !== undefined ? { batch: true as const } : {}),
      status: res.status,
      ...(ended !== undefined ? { failure: ended } : {}),
      ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
      ...(usage?.promptTokens !== undefined ? { promptTokens: usage.promptTokens } : {}),
      ...(usage?.cachedTokens !== undefined ? { cachedTokens: usage.cachedTokens } : {}),
      // TTFT of the backend alone (fetch → first content), what the router's prefill model learns from.
      ...(eventStream && firstContentAt !== undefined ? { ttftMs: firstContentAt - attempt.startedAt } : {}),
      ...(usage?.completionTokens !== undefined ? { outputTokens: usage.completionTokens } : {}),
      durationMs: now - startedAt,
    });
    log.emit(now, {
      status: res.status,
      ...(ended !== undefined && ended !== failure ? { failure: ended } : {}),
      ...(t.usage?.promptTokens !== undefined ? { promptTokens: t.usage.promptTokens } : {}),
      ...(t.usage?.cachedTokens !== undefined ? { cachedTokensReported: t.usage.cachedTokens } : {}),
      ...(t.usage?.completionTokens !== undefined ? { outputTokens: t.usage.completionTokens } : {}),
      ...(firstContentAt !== undefined && eventStream ? { ttftMs: firstContentAt - startedAt } : {}),
      ...(end.kind === "client_abort" || end.kind === "client_stall" ? { aborted: true } : {}),
      ...(end.kind === "client_stall" ? { clientStall: true as const } : {}),
      ...(backendError ? { backendError: true as const } : {}),
      ...(end.kind === "stream_error" || end.kind === "idle_timeout" || end.kind === "client_stall"
        ? { error: end.message }
        : {}),
    });
  };
  if (failure !== undefined) log.set({ failure });
  log.defer();

  // A refused retry answers with the first backend's error, read before the retry was asked for.
  if (final.bodyLost === true) {
    onEnd({ kind: "done" }, tap);
    headers.set("content-type", "application/json");
    const body = JSON.stringify(errorBody(backendErrorBodyLost(res.status, decision.backendId)));
    return new Response(body, { status: res.status, headers });
  }
  if (final.buffered !== undefined || attempt.reader === undefined) {
    onEnd({ kind: "done" }, tap);
    return new Response(final.buffered ?? null, { status: res.status, headers });
  }
  if (client.aborted) {
    attempt.abort.abort();
    attempt.reader.cancel().catch(() => {});
    onEnd({ kind: "client_abort" }, tap);
    return new Response(null, { status: CLIENT_CLOSED });
  }
  // The first bytes were read when the attempt's answer came (upstream.ts): the stream relays from now.
  const relayingSince = Date.now();
  const body = relay(
    {
      reader: attempt.reader,
      first: attempt.first,
      abort: attempt.abort,
      eventStream,
      idleMs: c.get("config").deadlines.idleMs,
      stallMs: c.get("config").deadlines.clientStallMs,
      client,
    },
    tap,
    {
      onFirstContent: (at) => {
        firstContentAt = at;
        // A streamed answer's first token: its prefill is over, which whoever decided the attempt learns from
        // (noticeFirstToken, in waitUntil). Only an event stream's (a whole JSON answer's first byte is its last)
        // of a 2xx (an error's body says nothing of a prefill), and not once the attempt's lease was reported.
        // Not when the policy that placed it does not learn from it, nor the shadow (router-client.ts heardByRouter).
        if (eventStream && res.ok && !final.reported) noticeFirstToken(call, decision);
      },
      onEnd,
      // A 2xx answer's events prove the engine is working (an error body or event, a keep-alive comment, prove
      // nothing of the kind): this isolate's waiting requests read it here, other isolates' through the RouterDO
      // (noticeRelay, for a long answer).
      ...(res.ok
        ? {
            onRelayed: (at: number) => {
              noteProgress(decision.backendId, at);
              noticeRelay(call, decision.cell, decision.backendId, at, relayingSince);
            },
          }
        : {}),
    },
  );
  return new Response(body, { status: res.status, headers });
}
