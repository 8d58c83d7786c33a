/**
 * What an attempt's ending means for routing, in one place for the RouterDO
 * and the Worker's local decisions: which failures are the backend's fault
 * (they count toward its ejection) and how long a 429 keeps a backend out.
 */

import type { RouteOutcome } from "../../routing/types";
import type { CompleteInput, FailureKind } from "./router-rpc";

/** The backend itself failed. (http_500, http_404 and http_403 are judged by the retry; the rest are not the backend's doing.) */
const BACKEND_FAULTS: ReadonlySet<FailureKind> = new Set([
  "connect_error",
  "timeout",
  "server_error",
  "stream_error",
]);

/**
 * Answers judged by their retry: the backend may be broken, or the request may fail everywhere (a poison
 * prompt; a model or endpoint no backend serves). A fault of the first backend only if the retry elsewhere
 * succeeds.
 */
const JUDGED_BY_RETRY: ReadonlySet<FailureKind> = new Set(["http_500", "http_404", "http_403"]);

export function isJudgedByRetry(failure: FailureKind | undefined): boolean {
  return failure !== undefined && JUDGED_BY_RETRY.has(failure);
}

/** A 429 without a usable retry-after keeps its backend out of decisions this long… */
export const DEFAULT_THROTTLE_MS = 1000;
/** …and a retry-after is believed up to this long. */
export const MAX_THROTTLE_MS = 60_000;

export function isBackendFault(failure: FailureKind | undefined): boolean {
  return failure !== undefined && BACKEND_FAULTS.has(failure);
}

/**
 * A report as the routing core's outcome. A batch's usage and TTFT are not one request's: its summed prompt
 * tokens over its first prompt's TTFT taught a prefill rate k times the real one (a 40-prompt batch: the
 * pool's rate ×5 in one request, for every client); its summed cached tokens, prompt and answer lengths
 * would skew the index's correction, the estimate margin and the expected answer alike. Its verdict stays.
 */
export function toRouteOutcome(input: CompleteInput): RouteOutcome {
  if (input.batch === true)
    return { ok: input.ok, ...(isBackendFault(input.failure) ? { backendFault: true } : {}) };
  return {
    ok: input.ok,
    ...(input.promptTokens !== undefined ? { promptTokens: input.promptTokens } : {}),
    ...(input.cachedTokens !== undefined ? { cachedTokens: input.cachedTokens } : {}),
    ...(input.ttftMs !== undefined ? { ttftMs: input.ttftMs } : {}),
    ...(input.ok && input.outputTokens !== undefined ? { outputTokens: input.outputTokens } : {}),
    ...(isBackendFault(input.failure) ? { backendFault: true } : {}),
  };
}

/** Until when a report's 429 keeps its backend out of decisions, or undefined when it was no 429. */
export function throttledUntil(input: CompleteInput, now: number): number | undefined {
  if (input.failure !== "throttled") return undefined;
  return now + Math.max(0, Math.min(MAX_THROTTLE_MS, input.retryAfterMs ?? DEFAULT_THROTTLE_MS));
}
