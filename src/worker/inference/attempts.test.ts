import { describe, expect, it } from "vitest";
import { failureOf } from "./attempts";
import { type Attempt, retryAfterOf } from "./upstream";

/** An answer as callBackend makes it: its retry-after read when its headers came. */
const answered = (status: number, headers: Record<string, string> = {}): Attempt => {
  const res = new Response(null, { status, headers });
  return {
    kind: "response",
    res,
    startedAt: 0,
    ...retryAfterOf(res),
    abort: new AbortController(),
    reader: undefined,
    first: undefined,
  };
};

describe("failureOf", () => {
  it("a 429 is busy; a 503 is busy only when it asks for a wait, else a fault (a dead engine)", () => {
    expect(failureOf(answered(429))).toBe("throttled");
    expect(failureOf(answered(503, { "retry-after": "30" }))).toBe("throttled");
    expect(failureOf(answered(503))).toBe("server_error");
    // A wait of nothing would throttle for 0 ms and never eject a dead engine behind such a proxy.
    expect(failureOf(answered(503, { "retry-after": "0" }))).toBe("server_error");
    expect(failureOf(answered(503, { "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" }))).toBe("server_error");
  });

  it("other statuses: 5xx faults, 4xx the request's, 2xx none", () => {
    expect(failureOf(answered(502))).toBe("server_error");
    expect(failureOf(answered(500))).toBe("http_500");
    // A 404 is judged by its retry like a 500: a backend that does not serve the model, or a request nobody can.
    expect(failureOf(answered(404))).toBe("http_404");
    // So is a 403: a proxy refusing the gateway's key, or a firewall refusing the request's content.
    expect(failureOf(answered(403))).toBe("http_403");
    expect(failureOf(answered(400))).toBe("request_error");
    expect(failureOf(answered(200))).toBeUndefined();
  });
});
