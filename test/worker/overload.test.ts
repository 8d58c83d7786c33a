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
import type { RelayNotice, RouteInput } from "../../src/worker/router/router-rpc";
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

  it("a first event late past the deadline, on a backend streaming through other isolates with no request ending (relay notices), is waited for: 200, no fault", async () => {
    const model = "ovl-relaying";
    const others = otherIsolatesRelaying(model);
    let sent = 0;
    try {
      await lateAnswer(model, Date.now());
      // Nothing ended on that backend but the waiting request: the RouterDO knew it busy by the notices alone.
      expect((await poolStats(model)).usage.completed).toBeLessThanOrEqual(1);
    } finally {
      sent = await others.stop();
    }
    expect(sent).toBeGreaterThan(0);
    await settle(model);
    const s = await poolStats(model);
    expect(s.backends[0]!.consecutiveFailures).toBe(0);
    expect(s.usage.failed).toBe(0);
  });

  it("an isolate relaying a long answer tells the RouterDO mid-stream, before any request ends", async () => {
    const model = "ovl-tells";
    const started = Date.now();
    const running = await openWithEnv(pool(model), "/v1/chat/completions", ask(model, "running"));
    expect(running.res.status).toBe(200);
    const text = running.res.text();
    const stub = env.ROUTER.getByName(model);
    // Past a whole first-event window (1.5 s) of streaming: evidence younger than a window, no lease ended.
    for (const at of [1700, 3200]) {
      await sleep(at - (Date.now() - started));
      const [p, s] = await Promise.all([stub.progress(), poolStats(model)]);
      expect(s.usage.completed).toBe(0);
      expect(s.leases).toBe(1);
      const seen = p.backends.find((b) => b.id === `${model}-1`);
      expect(seen?.ageMs).toBeLessThan(Number(FIRST_BYTE_MS));
    }
    expect(await text).toContain("data: [DONE]");
    await running.settled();
  });

  for (const mode of ["throws", "hangs"] as const) {
    it(`a RouterDO whose relaying() ${mode} leaves the relayed request's outcome and timing as they were`, async () => {
      const model = `ovl-notice-${mode}`;
      let calls = 0;
      const router = interceptRouterMethod("relaying", () => async () => {
        calls++;
        if (mode === "throws") throw new Error("Durable Object reset because its code was updated.");
        await sleep(3000);
        return { ok: true, kept: 0 };
      });
      const started = Date.now();
      const running = await openWithEnv(
        { ...pool(model), ROUTER: router },
        "/v1/chat/completions",
        ask(model, "running"),
      );
      expect(running.res.status).toBe(200);
      const text = await running.res.text();
      const took = Date.now() - started;
      expect(text).not.toContain("error");
      expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
      // /busy streams 20 tokens 200 ms apart: the answer's own time, nothing added for the notices.
      expect(took).toBeGreaterThan(3800);
      expect(took).toBeLessThan(4800);
      await running.settled();
      expect(calls).toBeGreaterThan(0);
      await settle(model);
      const s = await poolStats(model);
      expect(s.usage.completed).toBe(1);
      expect(s.usage.failed).toBe(0);
      expect(s.backends[0]!.consecutiveFailures).toBe(0);
    });
  }

  it("the notice rate stays bounded under a burst: one per backend per quarter window, mostly carried on route calls", async () => {
    const model = "ovl-burst";
    const counted = countingRouter();
    const vars = {
      ...faultServerPool(model, "busy", 2),
      UPSTREAM_FIRST_BYTE_TIMEOUT_MS: FIRST_BYTE_MS,
      ROUTER: counted.ns,
    };
    const REQUESTS = 48;
    const started = Date.now();
    const all: Promise<void>[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      all.push(
        (async () => {
          const r = await openWithEnv(vars, "/v1/chat/completions", ask(model, `running ${i}`));
          expect(r.res.status).toBe(200);
          expect(await r.res.text()).toContain("data: [DONE]");
          await r.settled();
        })(),
      );
      await sleep(50);
    }
    const arrivalsEnded = { ...counted.totals };
    await Promise.all(all);
    const span = Date.now() - started;
    const { totals } = counted;
    const everyMs = Number(FIRST_BYTE_MS) / 4;
    // 48 requests x 20 events relayed; notices: at most one per backend per quarter window (+1 at each end).
    const bound = 2 * (Math.ceil(span / everyMs) + 1);
    console.log(
      `burst: ${REQUESTS} requests over ${span} ms; notices carried on route calls ${totals.carried}, ` +
        `sent alone ${totals.sentAlone} in ${totals.calls} calls (${arrivalsEnded.calls} while requests arrived); bound ${bound}`,
    );
    expect(totals.carried).toBeGreaterThan(0);
    expect(totals.carried + totals.sentAlone).toBeLessThanOrEqual(bound);
    // While requests arrive every 50 ms, route calls carry the notices: few calls of their own.
    expect(arrivalsEnded.calls).toBeLessThanOrEqual(2);
    expect(totals.calls).toBeLessThanOrEqual(bound);
    await settle(model);
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

/**
 * Another isolate streaming from `model`'s only backend, as its RouterDO hears it: every 100 ms, once the pool's
 * object knows its fleet, a relay notice for that backend (its answers go on; none of them ends). `stop()` ends
 * it and says how many notices it sent.
 */
function otherIsolatesRelaying(model: string): { stop(): Promise<number> } {
  let running = true;
  let sent = 0;
  const loop = (async () => {
    const stub = env.ROUTER.getByName(model);
    while (running) {
      if ((await stub.stats()).ok) {
        try {
          await stub.relaying([{ id: `${model}-1`, ageMs: 0 }]);
          sent++;
        } catch {
          // An object without relaying() (before this change): nothing heard, as then.
        }
      }
      await sleep(100);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return sent;
    },
  };
}

/** The real ROUTER namespace, counting relay notices: carried on route calls, or sent alone (calls, entries). */
function countingRouter(): {
  ns: Env["ROUTER"];
  totals: { carried: number; sentAlone: number; calls: number };
} {
  const totals = { carried: 0, sentAlone: 0, calls: 0 };
  const real = env.ROUTER;
  const ns = {
    ...real,
    getByName(name: string, options?: DurableObjectNamespaceGetDurableObjectOptions) {
      const stub = real.getByName(name, options);
      return new Proxy(stub, {
        get(target, prop, receiver) {
          if (prop === "route")
            return (input: RouteInput) => {
              totals.carried += input.relaying?.length ?? 0;
              return target.route(input);
            };
          if (prop === "relaying")
            return (items: readonly RelayNotice[]) => {
              totals.calls++;
              totals.sentAlone += items.length;
              return target.relaying(items);
            };
          return Reflect.get(target, prop, receiver);
        },
      });
    },
  } as Env["ROUTER"];
  return { ns, totals };
}

/** The real ROUTER namespace whose stubs' progress() throws, or answers only after 3 s (past every deadline here). */
function failingProgress(mode: "throws" | "hangs"): Env["ROUTER"] {
  return interceptRouterMethod("progress", (target) => async () => {
    if (mode === "throws") throw new Error("Durable Object reset because its code was updated.");
    await sleep(3000);
    return target.progress();
  });
}
