/**
 * The data plane never fails for the control plane's sake: with the pool's
 * RouterDO throwing, hanging past ROUTER_TIMEOUT_MS or answering
 * `overloaded`, every request is still served by a healthy backend, decided
 * in the Worker (x-prefix-gateway-route: local); once the RouterDO answers
 * again, routing returns to it, and no lease is left behind (a lease granted
 * after the Worker stopped waiting is handed back unused).
 *
 * The RouterDO is the real one; a thin wrapper around its namespace makes
 * chosen calls fail the way a platform failure would. While it fails, the
 * Worker waits the deadline it ships with (50 ms, which the 300 ms hang
 * always outlasts); before and after, the suite's own (vitest.config.ts),
 * which no loaded machine misses, so that "routing returns to the RouterDO"
 * is not mistaken for a slow answer.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { ROUTER_BACKOFF_MS } from "../../src/worker/router/router-client";
import {
  authHeaders,
  BACKEND_KEY,
  CLIENT_KEY,
  chatBody,
  DEPLOYED_ROUTER_DEADLINE,
  faultServerPool,
  interceptRoute,
  longPrompt,
  SPARE_MODEL,
  settle,
  spareUrls,
} from "./helpers";

/** The suite's second client key (vitest.config.ts GATEWAY_API_KEYS). */
const SECOND_KEY = "test-client-key-beta";

type Mode = "ok" | "throw" | "hang" | "overloaded";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let mode: Mode = "ok";
/** When each route() call was made (the isolate's clock, which the breaker reads too). */
let routeCalls: number[] = [];

/** The real ROUTER namespace, whose route() fails as `mode` says (the other methods pass through). */
function faultyRouter(): Env["ROUTER"] {
  return interceptRoute(async (input, real) => {
    routeCalls.push(Date.now());
    if (mode === "throw") throw new Error("Durable Object reset because its code was updated.");
    if (mode === "overloaded")
      throw Object.assign(new Error("Durable Object is overloaded. Too many requests queued."), {
        overloaded: true,
        retryable: false,
      });
    if (mode === "hang") await sleep(300);
    return real(input);
  });
}

const FLEET = () =>
  JSON.stringify(
    spareUrls().map((url, i) => ({
      id: `fb-${i + 1}`,
      url,
      models: [SPARE_MODEL],
      apiKey: BACKEND_KEY,
      weight: 1,
      kvCacheTokens: 262144,
    })),
  );

async function send(seed: string, stream = false, vars: Partial<Env> = {}) {
  const ctx = createExecutionContext();
  const body = JSON.parse(chatBody(longPrompt(seed), "q", stream ? { stream: true } : {})) as Record<
    string,
    unknown
  >;
  const res = await worker.fetch(
    new Request("https://gateway.test/v1/chat/completions", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ ...body, model: SPARE_MODEL }),
    }),
    { ...env, ...vars, BACKENDS: FLEET(), ROUTER: faultyRouter() },
    ctx,
  );
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { res, text };
}

async function stats() {
  const s = await env.ROUTER.getByName(SPARE_MODEL).stats();
  if (!s.ok) throw new Error(s.message);
  return s;
}

afterEach(async () => {
  mode = "ok";
  // Let the isolate's circuit breaker close again before the next test.
  await sleep(ROUTER_BACKOFF_MS + 50);
});

describe("RouterDO unavailable", () => {
  it.each(["throw", "hang", "overloaded"] as const)(
    "route() %s: every request is served, decided locally; then routing returns to the RouterDO with no lease left",
    async (failure) => {
      // The deployed deadline only while route() fails; the suite's, which no loaded machine misses, elsewhere.
      expect(DEPLOYED_ROUTER_DEADLINE.ROUTER_TIMEOUT_MS).toBe("50");
      expect(Number(env.ROUTER_TIMEOUT_MS)).toBeGreaterThanOrEqual(10_000);
      // Warm: the RouterDO knows the fleet.
      expect((await send(`fb-warm-${failure}`)).res.status).toBe(200);
      await settle(SPARE_MODEL);
      const before = await stats();
      mode = failure;
      routeCalls = [];
      const ids = new Set(spareUrls().map((_, i) => `fb-${i + 1}`));
      const homes = new Map<string, string>();
      for (let i = 0; i < 8; i++) {
        const seed = `fb-${failure}-${i % 4}`;
        const { res, text } = await send(seed, i % 2 === 0, DEPLOYED_ROUTER_DEADLINE);
        expect(res.status).toBe(200);
        expect(res.headers.get("x-prefix-gateway-route")).toBe("local");
        const backend = res.headers.get("x-prefix-gateway-backend")!;
        expect(ids.has(backend)).toBe(true);
        // Local decisions are consistent hashing: a prefix keeps its home.
        if (homes.has(seed)) expect(backend).toBe(homes.get(seed));
        homes.set(seed, backend);
        if (i % 2 === 0) expect(text).toContain("data: [DONE]");
      }
      // The breaker stops asking after a failure: a route call at most every ROUTER_BACKOFF_MS, however long
      // the eight requests took (on an idle machine that is one or two calls; on a loaded one, a few more).
      expect(routeCalls.length).toBeGreaterThanOrEqual(1);
      for (let i = 1; i < routeCalls.length; i++)
        expect(routeCalls[i]! - routeCalls[i - 1]!).toBeGreaterThanOrEqual(ROUTER_BACKOFF_MS);
      mode = "ok";
      await sleep(ROUTER_BACKOFF_MS + 350);
      const { res } = await send(`fb-back-${failure}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-prefix-gateway-route")).not.toBe("local");
      await settle(SPARE_MODEL);
      const after = await stats();
      expect(after.leases).toBe(0);
      expect(after.router.totalInflight).toBe(0);
      // The local decisions' outcomes reached the RouterDO afterwards (observe), without any lease.
      expect(after.usage.observed).toBeGreaterThan(before.usage.observed);
    },
  );
});

describe("RouterDO lost mid-traffic", () => {
  it("a stream it granted keeps running to [DONE] while new requests are decided locally; its lease still ends", async () => {
    expect((await send("mid-warm")).res.status).toBe(200);
    await settle(SPARE_MODEL);
    // A long answer, granted by the RouterDO: its headers and first event are here, the rest still to come.
    const ctx = createExecutionContext();
    const body = JSON.parse(
      chatBody(longPrompt("mid-long"), "q", { stream: true, max_tokens: 200 }),
    ) as object;
    const running = await worker.fetch(
      new Request("https://gateway.test/v1/chat/completions", {
        method: "POST",
        headers: authHeaders(),
        body: JSON.stringify({ ...body, model: SPARE_MODEL }),
      }),
      { ...env, ...DEPLOYED_ROUTER_DEADLINE, BACKENDS: FLEET(), ROUTER: faultyRouter() },
      ctx,
    );
    expect(running.status).toBe(200);
    expect(running.headers.get("x-prefix-gateway-route")).not.toBe("local");
    // Now every route call fails: new requests, streamed and not, are still answered.
    mode = "throw";
    for (let i = 0; i < 4; i++) {
      const { res, text } = await send(`mid-new-${i}`, i % 2 === 0, DEPLOYED_ROUTER_DEADLINE);
      expect(res.status).toBe(200);
      if (res.headers.get("x-prefix-gateway-route") !== "local")
        console.log(
          "DEBUG",
          res.status,
          await res
            .clone()
            .text()
            .catch(() => ""),
        );
      expect(res.headers.get("x-prefix-gateway-route")).toBe("local");
      if (i % 2 === 0) expect(text).toContain("data: [DONE]");
    }
    const text = await running.text();
    await waitOnExecutionContext(ctx);
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(text).not.toContain('"error"');
    // Its end was reported while route() failed (the report is not a route call): no lease is left behind.
    mode = "ok";
    await sleep(ROUTER_BACKOFF_MS + 350);
    expect((await send("mid-back")).res.headers.get("x-prefix-gateway-route")).not.toBe("local");
    await settle(SPARE_MODEL);
    const after = await stats();
    expect(after.leases).toBe(0);
    expect(after.router.totalInflight).toBe(0);
  });
});

describe("the isolate's own retry budget while the RouterDO is out of reach, shared out by client key", () => {
  // Two backends on the fault server's /poison: a body holding "POISON" fails on both (a prompt that fails
  // everywhere: each new one is retried once), one holding "VICTIM" fails the first time only (a backend
  // failing a request that its retry elsewhere gets served).
  const model = "local-share";

  async function ask(key: string, content: string, m = model) {
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request("https://gateway.test/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: m, messages: [{ role: "user", content }], max_tokens: 4 }),
      }),
      {
        ...env,
        ...DEPLOYED_ROUTER_DEADLINE,
        ...faultServerPool(m, "poison", 2),
        ROUTER: faultyRouter(),
        // One client key configured: the first of the test env's keys.
        ...(m === model ? {} : { GATEWAY_API_KEYS: CLIENT_KEY }),
      },
      ctx,
    );
    await res.text();
    await waitOnExecutionContext(ctx);
    expect(res.headers.get("x-prefix-gateway-route")).toBe("local");
    return res.status;
  }

  it("one key whose every request fails everywhere cannot take the retries another key needs", async () => {
    mode = "throw";
    // The flood: 21 new poison bodies, each tried on both backends (one retry each while any is left), all 500.
    for (let i = 0; i < 21; i++) expect(await ask(CLIENT_KEY, `POISON ${i} ${"p".repeat(40)}`)).toBe(500);
    // Another key's request that its first backend fails is still retried on the other, and served.
    expect(await ask(SECOND_KEY, `VICTIM 1 ${"v".repeat(40)}`)).toBe(200);
    // Its share refills from its own requests: after three more of them, another retry.
    for (let i = 0; i < 3; i++) expect(await ask(SECOND_KEY, `plain ${i} ${"q".repeat(40)}`)).toBe(200);
    expect(await ask(SECOND_KEY, `VICTIM 2 ${"v".repeat(40)}`)).toBe(200);
  });

  it("with one client key configured there is no other client to keep retries for: the whole budget is its", async () => {
    mode = "throw";
    // Three requests whose first backend fails them: the isolate's budget (3) retries each on the other.
    // A key's share (1.5, refilled 0.2 a request) would have retried the first only.
    for (let i = 0; i < 3; i++)
      expect(await ask(CLIENT_KEY, `VICTIM one-key ${i} ${"w".repeat(40)}`, "local-one-key")).toBe(200);
  });
});
