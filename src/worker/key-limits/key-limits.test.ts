import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { GatewayEnv } from "../app-types";
import type { GatewayConfig, GatewayKey } from "../config";
import { RequestLog } from "../log";
import { keyConcurrency } from "./key-limits";

/**
 * A key's concurrency slot ends when its response ends, or when the client leaves (the request's signal).
 * The slot is taken after the body is read (red-team-6), so a client may already be gone by then: the
 * signal aborted before the middleware listens, and its abort event never comes again.
 */
describe("keyConcurrency", () => {
  it("releases the slot of a client that left before the slot was granted, though its body is never read", async () => {
    let released = 0;
    const limiter = {
      getByName: () => ({
        acquire: async () => ({ ok: true, inflight: 1 }),
        release: async () => {
          released++;
        },
        renew: async () => ({ ok: true }),
      }),
    };
    const app = new Hono<GatewayEnv>();
    app.use(async (c, next) => {
      c.set("config", { locationHint: undefined } as unknown as GatewayConfig);
      c.set("gatewayKey", { id: "k", maxConcurrent: 1 } as unknown as GatewayKey);
      c.set("log", new RequestLog("r", "POST", "/v1/chat/completions", 0, () => {}));
      await next();
    });
    // A body nobody pulls: workerd does not always cancel a JS-stream body whose client left
    // (cloudflare/workerd#6832), so the signal is what ends the slot.
    app.post("/", keyConcurrency(), () => new Response(new ReadableStream({ pull() {} })));
    const waits: Promise<unknown>[] = [];
    const ctx = { waitUntil: (p: Promise<unknown>) => waits.push(p), passThroughOnException: () => {} };
    const gone = new AbortController();
    gone.abort();
    const res = await app.request(
      new Request("http://gw/", { method: "POST", signal: gone.signal }),
      undefined,
      { KEY_LIMITER: limiter } as unknown as GatewayEnv["Bindings"],
      ctx as unknown as ExecutionContext,
    );
    expect(res.status).toBe(200);
    await Promise.all(waits);
    expect(released).toBe(1);
  });
});
