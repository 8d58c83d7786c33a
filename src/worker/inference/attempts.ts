/**
 * Step 2 of an inference request: route and call, retrying once elsewhere (twice when the retry met a busy backend).
 *
 * A retry happens only before the first byte reaches the client, only on
 * another backend, at most once per request — but a retry answered 429 (or a 503 with a retry-after) moves on
 * once more, avoiding both backends tried — and only while the pool's retry
 * budget allows (router/router-client.ts: the RouterDO spends it, and holds each client key to a share of
 * it: src/routing/retry-budget.ts KeyedRetryBudget). It is tried for
 * a refused or timed-out connection, a backend that refuses the gateway's
 * own key (a 401: upstream.ts, a fault of that backend), a 502/503/504, a 429 or a 503 with a
 * retry-after (busy: that backend is kept out of decisions for that long,
 * never blamed), a 500, a 404 and a 403. Those three are the
 * ambiguous answers — the backend may be broken (or not serve the model BACKENDS
 * says it does), or the request may fail on every backend (a poison prompt, a
 * model or endpoint served nowhere) — and the retry is the test: if the same
 * request succeeds elsewhere, the first backend takes a fault; if it fails
 * there too, nobody does, and this isolate remembers the request so that
 * repeats of it (SDKs retry 500s by themselves) are not retried again.
 */

import { BoundedSet } from "../../routing/bounded-set";
import type { BackendConfig, GatewayConfig } from "../config";
import { deadline } from "../deadline";
import { GatewayError } from "../errors";
import { concat } from "../request/read-body";
import { isJudgedByRetry } from "../router/outcomes";
import type { Cell } from "../router/pool-cells";
import {
  askProgress,
  type Decision,
  decide,
  NOWHERE_ELSE,
  RETRY_REFUSED,
  type RouteCall,
} from "../router/router-client";
import type { FailureKind } from "../router/router-rpc";
import { sha256Hex } from "../sha256";
import { learnProgress } from "./backend-progress";
import type { InferenceRequest } from "./inference-request";
import { type Attempt, callBackend, type ProgressSource } from "./upstream";

export interface Leg {
  readonly decision: Decision;
  readonly backend: BackendConfig;
  readonly attempt: Attempt;
  /** Set when this leg's failure was already reported (its retry was refused: the RouterDO ended it). */
  readonly reported: boolean;
  /** The failed response's body, read before a retry was asked for (a refused retry answers with it). */
  readonly buffered?: Uint8Array;
  /**
   * The failed response's body was given up while buffering it (past MAX_BUFFERED_ERROR_BYTES, it stalled or
   * broke) and no retry came: its reader is cancelled, so the answer must be written without it.
   */
  readonly bodyLost?: true;
}

export interface LegsResult {
  readonly final: Leg;
  /** The first leg's backend, when the final leg is a retry. */
  readonly retriedFrom?: string;
  /** A retry was wanted but the budget refused it. */
  readonly retryRefused?: boolean;
  /** The retry's backend, when it answered busy (429) and the request moved on to a third. */
  readonly busyRetriedFrom?: string;
}

const PATHS = { chat: "/v1/chat/completions", completions: "/v1/completions" } as const;

/** Error bodies are small; a retry reads at most this much of one before giving up on keeping it. */
const MAX_BUFFERED_ERROR_BYTES = 64 * 1024;
/** Requests this isolate saw fail with a 500 on two backends (fingerprints, least recent first out). */
const POISON_MEMORY = 1024;
const poison = new BoundedSet<string>(POISON_MEMORY);

/** How an attempt failed, for the report and the retry decision; undefined for a usable answer. */
export function failureOf(attempt: Attempt): FailureKind | undefined {
  if (attempt.kind === "failed") return attempt.failure;
  const s = attempt.res.status;
  // Busy, not broken: a 429, or a 503 that says when to come back (RFC 9110 §10.2.3: a 503's
  // Retry-After is how long the service expects to be unavailable, e.g. a proxy shedding load). A
  // 503 without it stays a fault: vLLM answers a bare 503 when its engine is dead. Nor does a 503 asking
  // for no wait at all (Retry-After 0, or a date already past) make it busy: that would throttle it for
  // 0 ms and never eject a dead engine behind such a proxy.
  if (s === 429 || (s === 503 && (attempt.retryAfterMs ?? 0) > 0)) return "throttled";
  if (s === 502 || s === 503 || s === 504) return "server_error";
  if (s >= 500) return "http_500";
  // The gateway calls fixed paths and only for models BACKENDS lists: a 404 while another backend serves the
  // request is this one's misconfiguration (a model it was not started with, a url missing its prefix). Judged
  // by the retry, as a 500 is: a 404 on every backend is the request's (its model or endpoint served nowhere).
  if (s === 404) return "http_404";
  // A proxy refusing the gateway's key (a fault of that backend, if the retry elsewhere is served), or a firewall
  // refusing this request's content (refused everywhere: nobody's fault, and the client is told). A 401 never
  // gets here: it can only be the gateway's key (upstream.ts).
  if (s === 403) return "http_403";
  if (s >= 400) return "request_error";
  return undefined;
}

const RETRYABLE: ReadonlySet<FailureKind> = new Set([
  "connect_error",
  "timeout",
  "server_error",
  "http_500",
  "http_404",
  "http_403",
  "throttled",
]);

/** Reads a failed response's (small) body so it can still be the answer if no retry happens. */
async function buffer(attempt: Attempt, idleMs: number): Promise<Uint8Array | undefined> {
  if (attempt.kind !== "response" || attempt.reader === undefined) return undefined;
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      // A backend that sends its error's headers and then stalls must not hold the request: the same idle
      // deadline as a relayed body's, then it is dropped like one past the cap.
      const r = await deadline(attempt.reader.read(), idleMs, () => undefined);
      if (r === undefined) {
        attempt.reader.cancel().catch(() => {});
        return undefined;
      }
      const { done, value } = r;
      if (done) break;
      size += value.byteLength;
      if (size > MAX_BUFFERED_ERROR_BYTES) {
        attempt.reader.cancel().catch(() => {});
        return undefined;
      }
      parts.push(value);
    }
  } catch {
    return undefined;
  }
  return concat(parts, size);
}

export interface AttemptContext {
  readonly call: RouteCall;
  readonly config: GatewayConfig;
  readonly request: InferenceRequest;
  readonly client: AbortSignal;
}

async function leg(ctx: AttemptContext, decision: Decision): Promise<Leg> {
  const backend = ctx.config.backendsById.get(decision.backendId);
  if (backend === undefined)
    throw new GatewayError(503, "service_unavailable", "fleet_changing", "Fleet is changing; retry.");
  const attempt = await callBackend(
    backend,
    PATHS[ctx.request.kind],
    // Only an engine that takes vLLM's cache_salt is sent one (BACKENDS cacheSalt); others may refuse the field.
    backend.cacheSalt && ctx.request.saltedBody !== undefined
      ? ctx.request.saltedBody
      : ctx.request.upstreamBody,
    ctx.request.upstreamRequestId,
    {
      stream: ctx.request.stream,
      deadlines: ctx.config.deadlines,
      client: ctx.client,
      progress: progressOf(ctx.call, decision.cell),
    },
  );
  return { decision, backend, attempt, reported: false };
}

/**
 * The cell's RouterDO as a second view of its backends' progress (upstream.ts firstBytes): what it says is
 * kept in this isolate's map (backend-progress.ts), for the cell's backends only.
 */
function progressOf(call: RouteCall, cell: Cell): ProgressSource {
  return {
    leadMs: call.routerMs,
    async refresh() {
      const askedAt = call.now();
      const backends = await askProgress(call, cell);
      if (backends !== undefined)
        learnProgress(backends, askedAt, new Set(cell.spec.backends.map((b) => b.id)));
    },
  };
}

/**
 * Whether a retry can reach a backend other than the failed one: another in its cell, or, with cells, another
 * cell's (its RouterDO sends a retry it cannot place unsuspected there: router-client.ts movedRetry) — except
 * for a local decision or a 500/404/403, whose retry stays in the cell (local-router.ts; the backend's verdict).
 */
function retryHasSomewhere(ctx: AttemptContext, first: Decision, failure: FailureKind): boolean {
  if (first.cell.spec.backends.length >= 2) return true;
  return ctx.call.pool.cells.length > 1 && first.via === "router" && !isJudgedByRetry(failure);
}

export async function routeAndCall(ctx: AttemptContext): Promise<LegsResult> {
  const first = await decide(ctx.call);
  if (first === RETRY_REFUSED || first === NOWHERE_ELSE)
    throw new Error("a first attempt is never refused by the retry budget");
  const one = await leg(ctx, first);
  const failure = failureOf(one.attempt);
  if (
    failure === undefined ||
    !RETRYABLE.has(failure) ||
    !retryHasSomewhere(ctx, first, failure) ||
    ctx.client.aborted
  )
    return { final: one };
  const fp = isJudgedByRetry(failure) ? await sha256Hex(ctx.request.upstreamBody, 16) : undefined;
  if (fp !== undefined && poison.has(fp)) return { final: one };

  const retried = await retry(ctx, one, failure, []);
  if (!("leg" in retried)) return retried;
  const two = retried.leg;
  const twoFailure = failureOf(two.attempt);
  if (fp !== undefined && isJudgedByRetry(twoFailure)) poison.add(fp);
  // A retry that met a busy backend (a 429, or a 503 with a retry-after: what a retry right after a kill meets on
  // a backend not yet marked throttled) moves on once more, while another backend is left to take it: busy is
  // no verdict on the request, and the client's SDK would only retry the 429 later itself. It spends the retry
  // budget again (refused: the 429 is the answer, as before), and the busy backend is kept out for its
  // retry-after by the report the move carries. Not after a 500, a 404 or a 403: that retry is the first backend's
  // verdict.
  if (
    twoFailure !== "throttled" ||
    fp !== undefined ||
    ctx.client.aborted ||
    !busyRetryHasSomewhere(ctx, first, two.decision)
  )
    return { final: two, retriedFrom: first.backendId };
  const moved = await retry(ctx, two, twoFailure, [first.backendId]);
  if (!("leg" in moved)) return { ...moved, retriedFrom: first.backendId };
  return { final: moved.leg, retriedFrom: first.backendId, busyRetriedFrom: two.decision.backendId };
}

/**
 * Whether a retry that met a busy backend can reach a third: another backend in the busy one's cell besides the
 * two tried, or, with cells, another cell's (as retryHasSomewhere).
 */
function busyRetryHasSomewhere(ctx: AttemptContext, first: Decision, busy: Decision): boolean {
  const tried = new Set([first.backendId, busy.backendId]);
  if (busy.cell.spec.backends.some((b) => !tried.has(b.id))) return true;
  return ctx.call.pool.cells.length > 1 && busy.via === "router";
}

/**
 * Retries `failed` (its failure `failure`) elsewhere, avoiding `tried` too: its error body read first (the answer
 * if no retry comes), then the retry asked of the router (its budget; the failed lease ends with the ask).
 * Either the new leg, or the result to answer with: the client left meanwhile, or the budget refused.
 */
async function retry(
  ctx: AttemptContext,
  failed: Leg,
  failure: FailureKind,
  tried: readonly string[],
): Promise<{ readonly leg: Leg } | LegsResult> {
  const buffered = await buffer(failed.attempt, ctx.config.deadlines.idleMs);
  // The client left while the error body was read (the read ends at once then: upstream.ts aborts the fetch):
  // a retry would spend the pool's budget, and a lease, on an answer nobody reads.
  if (ctx.client.aborted) return { final: { ...failed, ...(buffered !== undefined ? { buffered } : {}) } };
  // The wait as read when the headers came (the verdict's own), not after the buffer's wait: reported
  // as is, it keeps the backend out a little longer than asked (by that wait), never for 0 ms when busy.
  const retryAfter = failed.attempt.kind === "response" ? failed.attempt.retryAfterMs : undefined;
  const next = await decide(ctx.call, {
    decision: failed.decision,
    failure,
    ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
    ...(tried.length > 0 ? { tried } : {}),
  });
  // Refused by the budget, or (a busy retry) nowhere to move on to: the failed attempt's answer is the client's.
  if (next === RETRY_REFUSED || next === NOWHERE_ELSE) {
    return {
      final: {
        ...failed,
        reported: true,
        ...(buffered !== undefined
          ? { buffered }
          : failed.attempt.kind === "response" && failed.attempt.reader !== undefined
            ? { bodyLost: true as const }
            : {}),
      },
      ...(next === RETRY_REFUSED ? { retryRefused: true } : {}),
    };
  }
  return { leg: await leg(ctx, next) };
}
