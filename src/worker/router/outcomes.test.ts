import { describe, expect, it } from "vitest";
import {
  DEFAULT_THROTTLE_MS,
  isBackendFault,
  MAX_THROTTLE_MS,
  throttledUntil,
  toRouteOutcome,
} from "./outcomes";
import type { FailureKind } from "./router-rpc";

describe("attempt outcomes for routing", () => {
  it("blames the backend for connect errors, timeouts, 502/503/504 and cut streams only", () => {
    const faults: FailureKind[] = ["connect_error", "timeout", "server_error", "stream_error"];
    const notFaults: FailureKind[] = [
      "http_500",
      "http_404",
      "http_403",
      "throttled",
      "client_abort",
      "request_error",
      "unused",
    ];
    for (const f of faults) expect(isBackendFault(f), f).toBe(true);
    for (const f of notFaults) expect(isBackendFault(f), f).toBe(false);
    expect(isBackendFault(undefined)).toBe(false);
  });

  it("carries what the backend reported, and a fault flag only for its faults", () => {
    expect(toRouteOutcome({ ok: true, promptTokens: 100, cachedTokens: 64, ttftMs: 12 })).toEqual({
      ok: true,
      promptTokens: 100,
      cachedTokens: 64,
      ttftMs: 12,
    });
    // usage.completion_tokens: the answer's blocks, charged to the backend's index; never for a failure.
    expect(toRouteOutcome({ ok: true, promptTokens: 100, cachedTokens: 64, outputTokens: 30 })).toEqual({
      ok: true,
      promptTokens: 100,
      cachedTokens: 64,
      outputTokens: 30,
    });
    expect(toRouteOutcome({ ok: false, failure: "stream_error", outputTokens: 30 })).toEqual({
      ok: false,
      backendFault: true,
    });
    expect(toRouteOutcome({ ok: false, failure: "timeout" })).toEqual({ ok: false, backendFault: true });
    expect(toRouteOutcome({ ok: false, failure: "client_abort" })).toEqual({ ok: false });
  });

  it("tells the router a prompt batch's verdict only: its usage and TTFT are no one request's", () => {
    const usage = { promptTokens: 24_000, cachedTokens: 0, ttftMs: 40, outputTokens: 80 };
    expect(toRouteOutcome({ ok: true, batch: true, ...usage })).toEqual({ ok: true });
    expect(toRouteOutcome({ ok: false, batch: true, failure: "stream_error", ...usage })).toEqual({
      ok: false,
      backendFault: true,
    });
  });

  it("throttles a 429's backend for its retry-after, within bounds; other failures not at all", () => {
    expect(throttledUntil({ ok: false, failure: "throttled", retryAfterMs: 5000 }, 1000)).toBe(6000);
    expect(throttledUntil({ ok: false, failure: "throttled" }, 1000)).toBe(1000 + DEFAULT_THROTTLE_MS);
    expect(throttledUntil({ ok: false, failure: "throttled", retryAfterMs: 1e9 }, 0)).toBe(MAX_THROTTLE_MS);
    expect(throttledUntil({ ok: false, failure: "throttled", retryAfterMs: -5 }, 7)).toBe(7);
    expect(throttledUntil({ ok: false, failure: "server_error", retryAfterMs: 5000 }, 0)).toBeUndefined();
  });
});
