/**
 * The Worker's fail-open path (router-client.ts decideLocally: the RouterDO unreachable) and a busy retry with
 * nowhere to move on to. The RouterDO answers such a retry `nowhere_else` when no backend outside those the
 * request's attempts met can serve (PoolRouter.usableBesides), and the client gets the busy backend's 429 and
 * its retry-after; the local path must judge the same way, from what the isolate knows (the drained and ejected
 * backends the RouterDO last reported, its own outcomes).
 *
 * The RouterDO is the real one; its route() throws on a busy retry's move (a platform failure mid-request: "Durable
 * Object reset because its code was updated"), so the first attempt and its retry are the RouterDO's and the move
 * the Worker's. (A move decided locally after a local retry is refused by the isolate's budget as it stands: one
 * key's share of a fresh isolate's burst is 1.5 retries, so that path never reached the decision.)
 */
import { describe, expect, it } from "vitest";
import {
  ADMIN_TOKEN,
  authHeaders,
  BACKEND_KEY,
  faultServerAs,
  gatewayWithEnv,
  interceptRoute,
  poolStats,
  settle,
} from "./helpers";

/** The real ROUTER namespace, whose route() fails for a busy retry's move (every other call passes). */
const failingOnMoves = (): Env["ROUTER"] =>
  interceptRoute(async (input, real) => {
    if (input.retryOf?.tried !== undefined)
      throw new Error("Durable Object reset because its code was updated.");
    return real(input);
  });

describe("a busy retry decided in the Worker with the RouterDO unreachable", () => {
  it("answers the busy backend's 429 when the only untried backend is drained, not a second attempt at the dead one", async () => {
    // Before: the local decision avoided both backends met, found nothing else usable (drained-f is out, as the
    // RouterDO's first answer told the isolate), and fell back on those avoided (Router.route): dead-f. The client
    // got 502 backend_unreachable from dead-f instead of the 429 and its retry-after, dead-f a second fault, and
    // the isolate's retry budget a withdrawal for it.
    const model = "fallback-dead-busy-drained";
    const vars = {
      BACKENDS: JSON.stringify(
        [
          { id: "dead-f", url: "http://127.0.0.1:1" },
          { id: "busy-f", url: faultServerAs(0, "busy429") },
          { id: "drained-f", url: faultServerAs(1, "negotiate") },
        ].map((b) => ({ ...b, models: [model], apiKey: BACKEND_KEY, weight: 1, kvCacheTokens: 65536 })),
      ),
      ROUTING_POLICY: "round_robin",
      ROUTER: failingOnMoves(),
    };
    const drain = await gatewayWithEnv(vars, "/admin/backends/drained-f/drain", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(drain.status).toBe(200);
    const res = await gatewayWithEnv(vars, "/v1/chat/completions", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({
        model,
        stream: true,
        max_tokens: 8,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    const text = await res.text();
    // The first attempt (the RouterDO's round_robin, dead-f first) met the dead backend, its retry busy-f.
    expect({ status: res.status, backend: res.headers.get("x-prefix-gateway-backend") }).toEqual({
      status: 429,
      backend: "busy-f",
    });
    expect(res.headers.get("retry-after")).toBe("30");
    expect(text).not.toContain("backend_unreachable");
    await settle(model);
    // The RouterDO heard dead-f's fault once, granted one retry, and holds no lease.
    const s = await poolStats(model);
    expect(s.leases).toBe(0);
    const of = (id: string) => s.backends.find((b) => b.id === id)!;
    expect(of("dead-f").consecutiveFailures).toBe(1);
    expect(of("busy-f").throttledUntil! - Date.now()).toBeGreaterThan(20_000);
    expect(s.usage.retried).toBe(1);
  });
});
