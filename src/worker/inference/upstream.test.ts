import { describe, expect, it } from "vitest";
import { isEventStream, isRetryableStatus, retryAfterMs } from "./upstream";

const withHeaders = (headers: Record<string, string>) => new Response(null, { headers });

describe("upstream responses", () => {
  it("retries 429 and 500/502/503/504 elsewhere, nothing else", () => {
    for (const s of [429, 500, 502, 503, 504]) expect(isRetryableStatus(s), String(s)).toBe(true);
    for (const s of [200, 400, 401, 404, 413, 501, 505]) expect(isRetryableStatus(s), String(s)).toBe(false);
  });

  it("reads retry-after as delta-seconds or an HTTP date", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs(withHeaders({ "retry-after": "3" }), now)).toBe(3000);
    expect(retryAfterMs(withHeaders({ "retry-after": " 1.5 " }), now)).toBe(1500);
    expect(retryAfterMs(withHeaders({ "retry-after": "Thu, 01 Jan 2026 00:00:10 GMT" }), now)).toBe(10_000);
    expect(retryAfterMs(withHeaders({ "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" }), now)).toBe(0);
    expect(retryAfterMs(withHeaders({ "retry-after": "soon" }), now)).toBeUndefined();
    expect(retryAfterMs(withHeaders({}), now)).toBeUndefined();
  });

  it("knows an event stream by its content type", () => {
    expect(isEventStream(withHeaders({ "content-type": "text/event-stream; charset=utf-8" }))).toBe(true);
    expect(isEventStream(withHeaders({ "content-type": "application/json" }))).toBe(false);
  });
});
