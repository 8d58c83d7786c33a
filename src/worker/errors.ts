/**
 * Typed errors and the one place that renders them. Handlers throw; the
 * app's onError turns every error into OpenAI's error shape
 * `{"error":{"message","type","param","code"}}` so SDKs surface it cleanly.
 * Unknown errors become a 500 with a request id, never a stack trace.
 */
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { MAX_MODEL_CHARS } from "./request/request-limits";

/**
 * What a client sent, as an error message may quote it: at most MAX_MODEL_CHARS characters (the longest model
 * name a body may carry), and past that cut and said to be, so no answer grows with what the client sends.
 */
export function quoteClient(text: string): string {
  if (text.length <= MAX_MODEL_CHARS) return text;
  // Not between the two halves of a surrogate pair: a lone half is not text.
  const end = /[\uD800-\uDBFF]/.test(text[MAX_MODEL_CHARS - 1]!) ? MAX_MODEL_CHARS - 1 : MAX_MODEL_CHARS;
  return `${text.slice(0, end)}… (${text.length} characters)`;
}

export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "not_found_error"
  // What OpenAI sends with 429 rate_limit_exceeded for a request-count limit (its token limits say "tokens").
  | "requests"
  // What OpenAI sends with a 429 slow_down: its service cannot take the traffic right now.
  | "rate_limit_error"
  | "server_error"
  | "service_unavailable";

export class GatewayError extends Error {
  override readonly name = "GatewayError";
  constructor(
    readonly status: ContentfulStatusCode,
    readonly type: ErrorType,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    /** Response headers the error carries (retry-after on a 429, allow on a 405), set by the one renderer. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string, param: string | null = null, code = "invalid_request") =>
  new GatewayError(400, "invalid_request_error", code, message, param);

export const unauthorized = () =>
  new GatewayError(
    401,
    "authentication_error",
    "invalid_api_key",
    "Invalid or missing API key. Send it as 'Authorization: Bearer <key>'.",
  );

export const requestTooLarge = (maxBytes: number) =>
  new GatewayError(
    413,
    "invalid_request_error",
    "request_too_large",
    `Request body exceeds ${maxBytes} bytes.`,
  );

/**
 * The request body's stream failed before its end: the client left mid-upload, or sent fewer bytes than its
 * content-length. The client is usually gone, so the status is for the log and metrics: the request's fault,
 * not an internal error.
 */
export const incompleteBody = () =>
  new GatewayError(
    400,
    "invalid_request_error",
    "incomplete_body",
    "The request body ended before it was complete (the connection broke or sent less than its content-length).",
  );

/** The request body stopped arriving for longer than the edge waits between two of its pieces. */
export const requestTimeout = (idleMs: number) =>
  new GatewayError(
    408,
    "invalid_request_error",
    "request_timeout",
    `The request body stopped arriving: nothing for ${idleMs} ms.`,
  );

/**
 * The request body did not arrive whole within the edge's total deadline (REQUEST_BODY_TIMEOUT_MS): 408, as
 * for a body that stops (RFC 9110 §15.5.9: the server did not receive a complete request in the time it was
 * prepared to wait; Node's requestTimeout and nginx's client_body_timeout answer the same).
 */
export const requestBodyTimeout = (totalMs: number) =>
  new GatewayError(
    408,
    "invalid_request_error",
    "request_timeout",
    `The request body did not arrive whole within ${totalMs} ms.`,
  );

/** A compressed body: we read JSON as sent and do not decompress (a decompressor is a zip-bomb amplifier). */
export const unsupportedContentEncoding = (encoding: string) =>
  new GatewayError(
    415,
    "invalid_request_error",
    "unsupported_content_encoding",
    `Content-Encoding '${encoding.slice(0, 64)}' is not supported; send the JSON body uncompressed.`,
  );

export const methodNotAllowed = (method: string, allowed: readonly string[]) =>
  new GatewayError(
    405,
    "invalid_request_error",
    "method_not_allowed",
    `Method ${method} is not allowed here; use ${allowed.join(" or ")}.`,
    null,
    { allow: allowed.join(", ") },
  );

/**
 * 429 from a per-key limit, in OpenAI's shape, with `retry-after` in whole
 * seconds (what the OpenAI SDKs wait before their automatic retry).
 */
export const rateLimited = (message: string, retryAfterSeconds: number) => {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new GatewayError(
    429,
    "requests",
    "rate_limit_exceeded",
    `${message} Please try again in ${seconds}s.`,
    null,
    { "retry-after": String(seconds) },
  );
};

/**
 * A shed request's `retry-after`, whole seconds within 1..60 whatever the RouterDO said (an object of another
 * version during a rollout may say nothing): fleetAtCapacity and keyOverShare.
 */
function shedRetryAfterSeconds(retryAfterMs: number): number {
  return Number.isFinite(retryAfterMs) ? Math.min(60, Math.max(1, Math.ceil(retryAfterMs / 1000))) : 1;
}

/**
 * 429 when every usable backend of the model's pool (or cell) is at its bound on requests in flight
 * (MAX_INFLIGHT_PER_BACKEND, a backend's maxInflight): the request is shed before any backend sees it.
 * OpenAI's own answer when its service cannot take the traffic: 429, type rate_limit_error, code slow_down;
 * `retry-after` in whole seconds, as the SDKs read it.
 */
export const fleetAtCapacity = (model: string, retryAfterMs: number) => {
  const seconds = shedRetryAfterSeconds(retryAfterMs);
  return new GatewayError(
    429,
    "rate_limit_error",
    "slow_down",
    `The fleet serving '${model}' is at capacity: every backend is at its bound on requests in flight. Please try again in ${seconds}s. (Operators: the bound is MAX_INFLIGHT_PER_BACKEND, or a backend's maxInflight in BACKENDS; raise it if the engines can take more.)`,
    null,
    { "retry-after": String(seconds) },
  );
};

/**
 * 429 when the model's pool has room, but not for this key: it holds its fair share of the slots
 * (MAX_INFLIGHT_PER_BACKEND binds) while other keys wait for theirs (src/routing/key-share.ts). The same shape
 * as fleetAtCapacity (OpenAI's slow_down, `retry-after` in whole seconds); the message names the reason, so
 * the client knows its own requests in flight are what to lower.
 */
export const keyOverShare = (model: string, held: number, retryAfterMs: number) => {
  const seconds = shedRetryAfterSeconds(retryAfterMs);
  return new GatewayError(
    429,
    "rate_limit_error",
    "slow_down",
    `The fleet serving '${model}' is near capacity and this API key already holds ${held} of its requests in flight, its fair share while other keys wait for theirs. Please try again in ${seconds}s, or hold fewer requests in flight at once. (Operators: KEY_SHARE_HEADROOM_PERCENT sets the slots kept for other keys; MAX_INFLIGHT_PER_BACKEND the slots.)`,
    null,
    { "retry-after": String(seconds) },
  );
};

export const modelNotFound = (model: string) =>
  new GatewayError(
    404,
    "invalid_request_error",
    "model_not_found",
    // Where to look next, as a new user asks: the served names are the client's to see (GET /v1/models).
    `The model '${quoteClient(model)}' is not served by this gateway; GET /v1/models lists those it serves.`,
    "model",
  );

/**
 * A path no route serves. OpenAI's API has many more endpoints than this gateway (embeddings, responses,
 * files…): the answer names the ones it has, so a client pointed here learns it from the error, not the docs.
 */
export const routeNotFound = (method: string, path: string, served: string) =>
  new GatewayError(
    404,
    "invalid_request_error",
    "not_found",
    `No route for ${method} ${quoteClient(path)}. This gateway serves ${served}.`,
  );

/** Refuses, with model_not_found, a model the gateway's config does not serve. */
export function requireModel(config: { readonly models: readonly string[] }, model: string): void {
  if (!config.models.includes(model)) throw modelNotFound(model);
}

/**
 * Every request while the config is invalid: which vars and secrets to fix, by name (config-invalid.ts
 * invalidVars), and where the reasons are; the reasons themselves name backends and models, the operator's.
 */
export const configInvalid = (vars: readonly string[], where: string) =>
  new GatewayError(
    503,
    "service_unavailable",
    "gateway_misconfigured",
    `Gateway configuration is invalid (${vars.join(", ")}): ${where}.`,
  );

export const noHealthyBackend = (model: string) =>
  new GatewayError(
    503,
    "service_unavailable",
    "no_healthy_backend",
    `No healthy backend for model '${model}'; try again shortly.`,
  );

export const backendUnreachable = (detail: string) =>
  new GatewayError(502, "server_error", "backend_unreachable", `Upstream backend failed: ${detail}`);

/**
 * A backend's error answer whose body could not be relayed (too large to keep, or it stopped arriving) while
 * a retry was being asked for, and none was granted: the client gets the backend's status (an SDK retries
 * a 429 or a 5xx the same way) with an error body of the gateway's, never an empty one.
 */
export const backendErrorBodyLost = (status: number, backendId: string) =>
  new GatewayError(
    status as ContentfulStatusCode,
    status === 429 ? "requests" : "server_error",
    "backend_error",
    `Upstream backend '${backendId}' answered ${status}; its error body could not be relayed (too large, or it stopped arriving).`,
  );

export const backendTimeout = (detail: string) =>
  new GatewayError(
    504,
    "server_error",
    "backend_timeout",
    `Upstream backend did not answer in time: ${detail}`,
  );

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function errorBody(e: GatewayError): OpenAIErrorBody {
  return { error: { message: e.message, type: e.type, param: e.param, code: e.code } };
}

/** Maps anything thrown to a GatewayError; unknown errors are hidden behind a generic 500. */
export function toGatewayError(err: unknown, requestId: string): GatewayError {
  if (err instanceof GatewayError) return err;
  // Hono throws HTTPException (e.g. from middleware such as bodyLimit); keep its status.
  if (typeof err === "object" && err !== null && "getResponse" in err && "status" in err) {
    const status = Number((err as { status: unknown }).status);
    if (status === 413)
      return new GatewayError(
        413,
        "invalid_request_error",
        "request_too_large",
        "Request body is too large.",
      );
    if (status >= 400 && status < 500)
      return new GatewayError(
        status as ContentfulStatusCode,
        "invalid_request_error",
        "bad_request",
        "Bad request.",
      );
  }
  return new GatewayError(
    500,
    "server_error",
    "internal_error",
    `Internal gateway error (request id ${requestId}).`,
  );
}
