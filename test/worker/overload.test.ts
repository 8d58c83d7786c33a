/**
 * A fleet that is slow, not broken (bench/results/red-team.md "Overload: a slow fleet"): under a traffic spike
 * every engine is alive and its queue makes first tokens late. A streamed request whose first event comes past
 * UPSTREAM_FIRST_BYTE_TIMEOUT_MS, on a backend that is streaming tokens to other requests meanwhile, is queued,
 * not lost: the gateway waits for it (up to the request's LEASE_TTL_SECONDS budget) instead of a 504, a retry
 * onto the saturated fleet and a fault towards ejecting a busy backend. A backend that sends nothing to anyone
 * is still timed out at the first-event deadline. Against test/worker/metrics-fault-server.ts /busy.
 *
 * Deployed, requests are spread over many isolates: the one waiting may have relayed nothing from that backend
 * itself. The RouterDO hears every isolate's lease ends, and is asked (RouterDO.progress()) before the deadline;
 * here "another isolate" is the test, routing and completing leases on the pool's RouterDO directly while the
 * queued request waits, so this isolate relays nothing from that backend but the waiting request.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  authHeaders,
  expectOpenAIError,
  faultServerPool,
  gatewayWithEnv,
  interceptRouterMethod,
  openWithEnv,
  poolStats,
  settle,
} from "./helpers";

/** The first event must come within 1.5 s; /busy's queued request gets it after 2.5 s. */
const FIRST_BYTE_MS = "1500";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pool(model: string): { BACKENDS: string; UPSTREAM_FIRST_BYTE_TIMEOUT_MS: string } {
  return { ...faultServerPool(model, "busy"), UPSTREAM_FIRST_BYTE_TIMEOUT_MS: FIRST_BYTE_MS };
}

/** /hungping: an engine hung behind a front end that sends keep-alive comments and fails some requests at once. */
function hungPool(model: string): { BACKENDS: string; UPSTREAM_FIRST_BYTE_TIMEOUT_MS: string } {
  return { ...faultServerPool(model, "hungping"), UPSTREAM_FIRST_BYTE_TIMEOUT_MS: FIRST_BYTE_MS };
}

/** `p`, or a failure after `ms` (so a test of something that hangs fails instead of waiting out its timeout). */
function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

function ask(model: string, content: string): RequestInit {
  return {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model, stream: true, max_tokens: 8, messages: [{ role: "user", content }] }),
  };
}

/** The queued request on /busy, answered past its first-event deadline: a 200 whose stream is whole. */
async function lateAnswer(model: string, started: number): Promise<string> {
  const res = await gatewayWithEnv(pool(model), "/v1/chat/completions", ask(model, "queued"));
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(Date.now() - started).toBeGreaterThan(2000);
  expect(text).toContain('"late"');
  expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  return text;
}

describe("overload: a slow fleet", () => {
  it("a first event late past the deadline, on a backend streaming to others meanwhile, is waited for: 200, no fault", async () => {
    const model = "ovl-busy";
    // A request already running on the backend: a token every 200 ms for 4 s.
    const running = await openWithEnv(pool(model), "/v1/chat/completions", ask(model, "running"));
    expect(running.res.status).toBe(200);
    const runningText = running.res.text();
    const started = Date.now();
    const text = await lateAnswer(model, started);
    expect(text).not.toContain("error");
    expect(await runningText).toContain("data: [DONE]");
    await running.settled();
    await settle(model);
    const s = await poolStats(model);
    expect(s.leases).toBe(0);
    expect(s.backends[0]!.consecutiveFailures).toBe(0);
    expect(s.backends[0]!.healthy).toBe(true);
    expect(s.usage.failed).toBe(0);
  });

  it("a first event late past the deadline on a backend that sends nothing to anyone is still a 504 at the deadline", async () => {
    const model = "ovl-silent";
    const started = Date.now();
    const res = await gatewayWithEnv(pool(model), "/v1/chat/completions", ask(model, "queued"));
    const message = await expectOpenAIError(res, 504, "backend_timeout");
    expect(message).toMatch(/the first event took longer than 1500 ms/);
    expect(Date.now() - started).toBeLessThan(2400);
    await settle(model);
    const s = await poolStats(model);
    expect(s.leases).toBe(0);
    expect(s.backends[0]!.consecutiveFailures).toBe(1);
  });

  it("a first event late past the deadline, on a backend only other isolates are seen answering (the RouterDO), is waited for: 200, no fault", async () => {
    const model = "ovl-remote";
    const others = otherIsolates(model);
    try {
      const started = Date.now();
      await lateAnswer(model, started);
    } finally {
      expect(await others.stop()).toBeGreaterThan(0);
    }
    await settle(model);
    const s = await poolStats(model);
    expect(s.leases).toBe(0);
    expect(s.backends[0]!.consecutiveFailures).toBe(0);
    expect(s.usage.failed).toBe(0);
  });

  for (const [label, prompt] of [
    ["", "queued"],
    [" (sent as application/json)", "queued asjson"],
  ] as const)
    it(`keep-alive comments from a hung engine's front end are no first event${label}: a 504 at the deadline, one fault`, async () => {
      const model = label === "" ? "ovl-ping" : "ovl-ping-json";
      const started = Date.now();
      const res = await within(
        4000,
        openWithEnv(hungPool(model), "/v1/chat/completions", ask(model, prompt)),
      );
      const message = await expectOpenAIError(res.res, 504, "backend_timeout");
      // Under application/json the gateway cannot know before the first bytes that a stream is coming.
      expect(message).toMatch(/the first (event|bytes of the body) took longer than 1500 ms/);
      expect(Date.now() - started).toBeLessThan(2400);
      await res.settled();
      await settle(model);
      const s = await poolStats(model);
      expect(s.leases).toBe(0);
      expect(s.backends[0]!.consecutiveFailures).toBe(1);
    });

  it("another client's requests failed in-stream at once by a hung engine's front end are no proof of life: the waiting one is a 504 at the deadline", async () => {
    const model = "ovl-infail";
    // Another client, every 100 ms: a 200 whose stream is an error event and [DONE] (its lease ends `ok` with
    // backendError; the RouterDO hears it too).
    let rejecting = true;
    let rejected = 0;
    const others = (async () => {
      while (rejecting) {
        const r = await gatewayWithEnv(hungPool(model), "/v1/chat/completions", ask(model, "reject"));
        expect(r.status).toBe(200);
        expect(await r.text()).toContain("rejected by the front end");
        rejected++;
        await sleep(100);
      }
    })();
    try {
      await sleep(300);
      const started = Date.now();
      // Held with nothing sent, not even a keep-alive: only the other client's answers could extend its wait.
      const res = await within(
        4000,
        openWithEnv(hungPool(model), "/v1/chat/completions", ask(model, "quiet")),
      );
      const message = await expectOpenAIError(res.res, 504, "backend_timeout");
      expect(message).toMatch(/the first event took longer than 1500 ms/);
      expect(Date.now() - started).toBeLessThan(2400);
      await res.settled();
    } finally {
      rejecting = false;
      await others;
    }
    expect(rejected).toBeGreaterThan(5);
  });

  it("a stream whose engine stops after a token while keep-alive comments go on ends with upstream_idle_timeout", async () => {
    const model = "ovl-idle";
    const started = Date.now();
    const res = await within(
      4000,
      openWithEnv(
        { ...hungPool(model), UPSTREAM_IDLE_TIMEOUT_MS: "1000" },
        "/v1/chat/completions",
        ask(model, "stalled"),
      ),
    );
    expect(res.res.status).toBe(200);
    const text = await within(4000, res.res.text());
    expect(text).toContain('"Hi"');
    expect(text).toContain("upstream_idle_timeout");
    expect(Date.now() - started).toBeLessThan(3000);
    await res.settled();
    await settle(model);
    expect((await poolStats(model)).usage.failed).toBe(1);
  });

  for (const mode of ["throws", "hangs"] as const) {
    it(`a RouterDO whose progress() ${mode} changes nothing: the 504 comes at the deadline, as without it`, async () => {
      const model = `ovl-remote-${mode}`;
      const others = otherIsolates(model);
      try {
        const started = Date.now();
        const res = await gatewayWithEnv(
          { ...pool(model), ROUTER: failingProgress(mode) },
          "/v1/chat/completions",
          ask(model, "queued"),
        );
        const message = await expectOpenAIError(res, 504, "backend_timeout");
        expect(message).toMatch(/the first event took longer than 1500 ms/);
        expect(Date.now() - started).toBeLessThan(2400);
      } finally {
        expect(await others.stop()).toBeGreaterThan(0);
      }
      await settle(model);
      // Counted as the failure it is (its fault may already be cleared by the other isolates' next success).
      expect((await poolStats(model)).usage.failed).toBe(1);
    });
  }
});

/**
 * Another isolate's traffic on `model`'s only backend, as its RouterDO hears it: every 100 ms, once the pool's
 * object knows its fleet (the gateway's first route call), a lease routed and completed with an answer.
 * `stop()` ends it and says how many it completed.
 */
function otherIsolates(model: string): { stop(): Promise<number> } {
  let running = true;
  let completed = 0;
  const loop = (async () => {
    const stub = env.ROUTER.getByName(model);
    while (running) {
      const s = await stub.stats();
      if (s.ok) {
        const r = await stub.route({ fleetVersion: s.fleetVersion, blocks: [], promptTokens: 16 });
        if (r.ok) {
          await stub.complete(r.leaseId, { ok: true, status: 200, outputTokens: 8 });
          completed++;
        }
      }
      await sleep(100);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return completed;
    },
  };
}

/** The real ROUTER namespace whose stubs' progress() throws, or answers only after 3 s (past every deadline here). */
function failingProgress(mode: "throws" | "hangs"): Env["ROUTER"] {
  return interceptRouterMethod("progress", (target) => async () => {
    if (mode === "throws") throw new Error("Durable Object reset because its code was updated.");
    await sleep(3000);
    return target.progress();
  });
}
