/**
 * The RouterDO's durable duties, through the real Worker and DO against real
 * emulators: a rotated BACKENDS secret takes effect on the next request;
 * a refused connection is retried on another backend and marks the dead one
 * unhealthy; alarms expire forgotten leases and restore recovered backends.
 */
import {
  createExecutionContext,
  runDurableObjectAlarm,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { keyIdOf } from "../../src/worker/gateway-keys";
import { testPoolSpec } from "../../src/worker/router/pool-spec-fixture";
import { sha256 } from "../../src/worker/sha256";
import {
  authHeaders,
  BACKEND_KEY,
  CLIENT_KEY,
  chatBody,
  gatewayWithEnv,
  interceptRoute,
  longPrompt,
  SPARE_MODEL,
  settle,
  spareUrls,
} from "./helpers";

const stub = () => env.ROUTER.getByName(SPARE_MODEL);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function fleet(...backends: { id: string; url: string }[]): string {
  return JSON.stringify(
    backends.map((b) => ({
      ...b,
      models: [SPARE_MODEL],
      apiKey: BACKEND_KEY,
      weight: 1,
      kvCacheTokens: 262144,
    })),
  );
}

function spareChat(seed: string, extra: Record<string, unknown> = {}): RequestInit {
  const body = JSON.parse(chatBody(longPrompt(seed), "q", extra)) as Record<string, unknown>;
  return { method: "POST", headers: authHeaders(), body: JSON.stringify({ ...body, model: SPARE_MODEL }) };
}

async function stats() {
  const s = await stub().stats();
  if (!s.ok) throw new Error(s.message);
  return s;
}

/**
 * The object reads backends' keys from its own env (its BACKENDS: the spec it is sent carries none). Deployed,
 * the Worker and its objects read one env; here the Worker's is swapped per request (gatewayWithEnv), so the
 * object's is swapped to match.
 */
async function objectEnv(overrides: Partial<Env>): Promise<void> {
  await runInDurableObject(stub(), (instance) => {
    const o = instance as unknown as { env: Env };
    o.env = { ...o.env, ...overrides };
  });
}

/** Three leases on `id` that end in a connect error, through the Worker's own RPC: `id` is ejected. */
async function ejectByRpc(id: string): Promise<void> {
  const s = await stats();
  let faults = 0;
  for (let i = 0; i < 200 && faults < 3; i++) {
    const r = await stub().route({ fleetVersion: s.fleetVersion, blocks: [i * 7919 + 5], promptTokens: 16 });
    if (!r.ok) throw new Error(r.message);
    if (r.backendId === id) {
      faults++;
      await stub().complete(r.leaseId, { ok: false, failure: "connect_error" });
    } else await stub().complete(r.leaseId, { ok: true });
  }
  expect((await stats()).backends.find((x) => x.id === id)!.healthy).toBe(false);
}

describe("RouterDO", () => {
  it("applies a changed BACKENDS secret on the next request, no redeploy", async () => {
    const [a, b] = spareUrls() as [string, string];
    const onlyA = { BACKENDS: fleet({ id: "spare-a", url: a }) };
    for (let i = 0; i < 4; i++) {
      const res = await gatewayWithEnv(onlyA, "/v1/chat/completions", spareChat(`swap-${i}`));
      expect(res.status).toBe(200);
      expect(res.headers.get("x-prefix-gateway-backend")).toBe("spare-a");
    }
    const versionA = (await stats()).fleetVersion;
    const onlyB = { BACKENDS: fleet({ id: "spare-b", url: b }) };
    for (let i = 0; i < 4; i++) {
      const res = await gatewayWithEnv(onlyB, "/v1/chat/completions", spareChat(`swap-${i}`));
      expect(res.headers.get("x-prefix-gateway-backend")).toBe("spare-b");
    }
    const s = await stats();
    expect(s.fleetVersion).not.toBe(versionA);
    expect(s.backends.map((x) => x.id)).toEqual(["spare-b"]);
  });

  it("retries a refused connection on another backend and ejects the dead one after 3 faults, not 1", async () => {
    const [a] = spareUrls() as [string];
    // Port 9 (discard) on loopback: nothing listens, the connection is refused before any byte.
    const withDead = { BACKENDS: fleet({ id: "dead", url: "http://127.0.0.1:9" }, { id: "alive", url: a }) };
    let retried = 0;
    for (let i = 0; i < 40 && retried < 3; i++) {
      const res = await gatewayWithEnv(
        withDead,
        "/v1/chat/completions",
        spareChat(`dead-${i}`, { stream: true }),
      );
      expect(res.status).toBe(200);
      expect(res.headers.get("x-prefix-gateway-backend")).toBe("alive");
      expect(await res.text()).toContain("data: [DONE]");
      await settle(SPARE_MODEL);
      const dead = (await stats()).backends.find((x) => x.id === "dead")!;
      if (dead.consecutiveFailures > retried) {
        retried = dead.consecutiveFailures;
        // In rotation until the third consecutive fault (EJECT_AFTER_FAULTS = 3).
        expect(dead.healthy).toBe(retried < 3);
      }
    }
    expect(retried).toBe(3);
    const dead = (await stats()).backends.find((x) => x.id === "dead")!;
    expect(dead.nextProbeAt).toBeGreaterThan(0);
    // The probe alarm (HEALTH_PROBE_SECONDS = 1) finds it still dead and backs off (2 s, then 4 s...).
    await sleep(1100);
    await runDurableObjectAlarm(stub());
    const after = (await stats()).backends.find((x) => x.id === "dead")!;
    expect(after.healthy).toBe(false);
    expect(after.nextProbeAt! - Date.now()).toBeGreaterThan(1000);
  });

  it("restores an ejected backend after 2 good /health probes, not on the first", async () => {
    const [a, b] = spareUrls() as [string, string];
    const both = { BACKENDS: fleet({ id: "h-a", url: a }, { id: "h-b", url: b }) };
    expect((await gatewayWithEnv(both, "/v1/chat/completions", spareChat("health"))).status).toBe(200);
    const s = await stats();
    // The Worker's own RPC: three leases on h-b that end in a connect error (as a failed attempt reports).
    let faults = 0;
    for (let i = 0; i < 200 && faults < 3; i++) {
      const r = await stub().route({
        fleetVersion: s.fleetVersion,
        blocks: [i * 7919 + 1],
        promptTokens: 16,
      });
      if (!r.ok) throw new Error(r.message);
      if (r.backendId === "h-b") {
        faults++;
        expect(await stub().complete(r.leaseId, { ok: false, failure: "connect_error" })).toEqual({
          ok: true,
          backendId: "h-b",
        });
      } else await stub().complete(r.leaseId, { ok: true });
    }
    expect(faults).toBe(3);
    expect((await stats()).backends.find((x) => x.id === "h-b")!.healthy).toBe(false);
    // While h-b is out every request goes to h-a.
    for (let i = 0; i < 3; i++) {
      const res = await gatewayWithEnv(both, "/v1/chat/completions", spareChat(`down-${i}`));
      expect(res.headers.get("x-prefix-gateway-backend")).toBe("h-a");
    }
    await sleep(1100);
    await runDurableObjectAlarm(stub());
    expect((await stats()).backends.find((x) => x.id === "h-b")!.healthy).toBe(false);
    await sleep(1100);
    await runDurableObjectAlarm(stub());
    const hb = (await stats()).backends.find((x) => x.id === "h-b")!;
    expect(hb.healthy).toBe(true);
    expect(hb.consecutiveFailures).toBe(0);
    expect((await stats()).usage.restorations).toBeGreaterThanOrEqual(1);
  });

  it("keeps out a backend that refuses its key though its /health is open: the probe asks /v1/models with that key", async () => {
    // vLLM started with --api-key guards /v1 and leaves /health open (as the emulators do). Probed on /health
    // alone, a backend whose BACKENDS key was wrong was restored after 2 probes, took requests, was ejected
    // again after 3 retried ones, and so on, for as long as the key stayed wrong.
    const [a, b] = spareUrls() as [string, string];
    const pool = {
      BACKENDS: JSON.stringify(
        [
          { id: "key-right", url: a, apiKey: BACKEND_KEY },
          { id: "key-wrong", url: b, apiKey: "not-the-emulators-key" },
        ].map((x) => ({ ...x, models: [SPARE_MODEL], weight: 1, kvCacheTokens: 262144 })),
      ),
    };
    await objectEnv(pool);
    for (let i = 0; i < 40; i++) {
      const res = await gatewayWithEnv(pool, "/v1/chat/completions", spareChat(`wrong-key-${i}`));
      expect(res.status).toBe(200);
      expect(res.headers.get("x-prefix-gateway-backend")).toBe("key-right");
      await settle(SPARE_MODEL);
      if (!(await stats()).backends.find((x) => x.id === "key-wrong")!.healthy) break;
    }
    expect((await stats()).backends.find((x) => x.id === "key-wrong")!.healthy).toBe(false);
    const restored = (await stats()).usage.restorations;
    // Two probe times (HEALTH_PROBE_SECONDS = 1): open /health twice would have restored it (RESTORE_AFTER_CHECKS = 2).
    for (let i = 0; i < 3; i++) {
      await sleep(1100);
      await runDurableObjectAlarm(stub());
    }
    const out = (await stats()).backends.find((x) => x.id === "key-wrong")!;
    expect(out.healthy).toBe(false);
    expect(out.nextProbeAt! - Date.now()).toBeGreaterThan(0);
    expect((await stats()).usage.restorations).toBe(restored);
  }, 30_000);

  it("restores a backend with its right key: the probe sends it (without, /v1/models would refuse)", async () => {
    const [a, b] = spareUrls() as [string, string];
    const pool = { BACKENDS: fleet({ id: "key-a", url: a }, { id: "key-b", url: b }) };
    await objectEnv(pool);
    expect((await gatewayWithEnv(pool, "/v1/chat/completions", spareChat("right-key"))).status).toBe(200);
    await ejectByRpc("key-b");
    await sleep(1100);
    await runDurableObjectAlarm(stub());
    await sleep(1100);
    await runDurableObjectAlarm(stub());
    expect((await stats()).backends.find((x) => x.id === "key-b")!.healthy).toBe(true);
  }, 20_000);

  it("expires a lease that never completes, by alarm, releasing its in-flight slot", async () => {
    const [a] = spareUrls() as [string];
    const short = { BACKENDS: fleet({ id: "lease-a", url: a }), LEASE_TTL_SECONDS: "1" };
    const ctx = createExecutionContext();
    const held = await worker.fetch(
      new Request(
        "https://gateway.test/v1/chat/completions",
        spareChat("lease", { stream: true, max_tokens: 2000 }),
      ),
      { ...env, ...short },
      ctx,
    );
    expect(held.status).toBe(200);
    const before = await stats();
    expect(before.leases).toBe(1);
    expect(before.backends[0]!.inflight).toBe(1);
    await sleep(1100);
    await runDurableObjectAlarm(stub());
    const after = await stats();
    expect(after.leases).toBe(0);
    expect(after.backends[0]!.inflight).toBe(0);
    expect(after.usage.expired).toBeGreaterThanOrEqual(1);
    // The late completion of an expired lease is harmless.
    await held.body?.cancel();
    await waitOnExecutionContext(ctx);
    expect((await stats()).backends[0]!.inflight).toBe(0);
  });
});

describe("the pool's retry budget, shared out by client key", () => {
  // Each new body that every backend answers 500 (or 404) is retried once before the isolate remembers it:
  // one client sending such requests without end spent the whole pool's budget, and another client's retry
  // away from a backend that had just died was refused (bench/results/red-team.md, third pass, item 5).
  const spec = testPoolSpec([
    { id: "rb-a", url: "http://127.0.0.1:9" },
    { id: "rb-b", url: "http://127.0.0.1:9" },
  ]);
  const version = "retry-share-1";

  /** A first attempt by `key` that fails with `failure`, and its retry asked for; whether it was granted. */
  async function failAndRetry(
    stub: DurableObjectStub<import("../../durable-objects/router-do").RouterDO>,
    key: string,
    i: number,
    failure: "http_500" | "connect_error",
  ): Promise<boolean> {
    const first = await stub.route({
      fleetVersion: version,
      spec,
      blocks: [i * 7919 + 3],
      promptTokens: 16,
      clientKey: key,
    });
    if (!first.ok) throw new Error(first.message);
    const retry = await stub.route({
      fleetVersion: version,
      blocks: [i * 7919 + 3],
      promptTokens: 16,
      clientKey: key,
      retryOf: { leaseId: first.leaseId, failure },
    });
    if (!retry.ok) {
      expect(retry.code).toBe("retry_budget_exhausted");
      return false;
    }
    await stub.complete(retry.leaseId, failure === "http_500" ? { ok: false, failure } : { ok: true });
    return true;
  }

  it("the Worker names the client's key to the RouterDO by its id, never by the key", async () => {
    const [a] = spareUrls() as [string];
    const seen: (string | undefined)[] = [];
    const ROUTER = interceptRoute((input, real) => {
      seen.push(input.clientKey);
      return real(input);
    });
    const res = await gatewayWithEnv(
      { BACKENDS: fleet({ id: "rb-key", url: a }), ROUTER },
      "/v1/chat/completions",
      spareChat("client-key"),
    );
    expect(res.status).toBe(200);
    expect(seen).toEqual([keyIdOf(await sha256(CLIENT_KEY))]);
    expect(seen[0]).toMatch(/^[0-9a-f]{16}$/);
  });

  it("one key whose every request fails everywhere cannot take the retries another key needs", async () => {
    const stub = env.ROUTER.getByName("retry-share");
    let flooded = 0;
    for (let i = 0; i < 60; i++) if (await failAndRetry(stub, "0123456789abcdef", i, "http_500")) flooded++;
    // Its share: 5 of the pool's 10 at once, plus 0.2 per request of its own.
    expect(flooded).toBeLessThanOrEqual(5 + 0.2 * 60);
    // Another key's request on a backend that just died is still retried elsewhere, every time.
    for (let i = 0; i < 3; i++)
      expect(await failAndRetry(stub, "fedcba9876543210", 1000 + i, "connect_error")).toBe(true);
    const s = await stub.stats();
    if (!s.ok) throw new Error(s.message);
    expect(s.usage.retriesRefused).toBe(60 - flooded);
  });
});

describe("progress(): when each backend last finished a request with an answer, as every isolate reported it", () => {
  it("counts answered lease ends (carried, sent alone, observed, of an earlier instance), not failures; forgets departed backends", async () => {
    const stub = env.ROUTER.getByName("progress-pool");
    const spec = testPoolSpec([
      { id: "pg-a", url: "http://127.0.0.1:9" },
      { id: "pg-b", url: "http://127.0.0.1:9" },
      { id: "pg-c", url: "http://127.0.0.1:9" },
    ]);
    const ages = async () => new Map((await stub.progress()).backends.map((b) => [b.id, b.ageMs] as const));
    expect((await stub.progress()).backends).toEqual([]); // before anything: nobody is known to answer
    const on = async (id: string, i: number) => {
      for (let j = 0; j < 100; j++) {
        const r = await stub.route({ fleetVersion: "pg-1", spec, blocks: [i * 7919 + j], promptTokens: 16 });
        if (!r.ok) throw new Error(r.message);
        if (r.backendId === id) return r.leaseId;
        await stub.complete(r.leaseId, { ok: false, failure: "unused" });
      }
      throw new Error(`never routed to ${id}`);
    };
    // A failure is no evidence of an engine working; a timeout neither.
    await stub.complete(await on("pg-a", 1), { ok: false, failure: "timeout" });
    await stub.complete(await on("pg-b", 2), { ok: false, failure: "client_abort" });
    expect(await ages()).toEqual(new Map());
    // An answer, alone or carried on another isolate's route call.
    await stub.complete(await on("pg-a", 3), { ok: true, status: 200 });
    const carried = await on("pg-b", 4);
    await stub.route({
      fleetVersion: "pg-1",
      blocks: [99],
      promptTokens: 16,
      completes: [{ leaseId: carried, outcome: { ok: true, status: 200 } }],
    });
    // A decision an isolate took alone (the object was unreachable), reported afterwards.
    await stub.observe({
      fleetVersion: "pg-1",
      backendId: "pg-c",
      blocks: [],
      promptTokens: 16,
      routedAt: Date.now(),
      outcome: { ok: true, status: 200 },
    });
    const seen = await ages();
    expect([...seen.keys()].sort()).toEqual(["pg-a", "pg-b", "pg-c"]);
    for (const age of seen.values()) expect(age).toBeGreaterThanOrEqual(0);
    for (const age of seen.values()) expect(age).toBeLessThan(5000);
    await sleep(300);
    const before = (await ages()).get("pg-a")!;
    expect(before).toBeGreaterThanOrEqual(seen.get("pg-a")! + 250); // an age, growing
    // The end of a lease an earlier instance granted counts too.
    await stub.complete(
      "lease-of-an-earlier-instance",
      { ok: true, status: 200 },
      { backendId: "pg-a", instance: "an-earlier-instance", arm: "a", ageMs: 1000 },
    );
    expect((await ages()).get("pg-a")!).toBeLessThan(before);
    // A backend that left the pool, or whose id now names another address, has no history.
    const moved = testPoolSpec([
      { id: "pg-a", url: "http://127.0.0.1:9" },
      { id: "pg-b", url: "http://127.0.0.1:10" },
    ]);
    const r = await stub.route({ fleetVersion: "pg-2", spec: moved, blocks: [7], promptTokens: 16 });
    if (r.ok) await stub.complete(r.leaseId, { ok: false, failure: "unused" });
    expect([...(await ages()).keys()]).toEqual(["pg-a"]);
  });

  it("hears relay notices (sent alone or carried on a route call): the freshest evidence wins, no lease ends", async () => {
    const stub = env.ROUTER.getByName("progress-relay");
    const spec = testPoolSpec([
      { id: "pr-a", url: "http://127.0.0.1:9" },
      { id: "pr-b", url: "http://127.0.0.1:9" },
    ]);
    // Before the object knows its fleet, notices name nothing it can keep.
    expect(await stub.relaying([{ id: "pr-a", ageMs: 0 }])).toEqual({ ok: true, kept: 0 });
    const r = await stub.route({ fleetVersion: "pr-1", spec, blocks: [1], promptTokens: 16 });
    if (!r.ok) throw new Error(r.message);
    const progress = async () => new Map((await stub.progress()).backends.map((b) => [b.id, b] as const));
    // Unknown ids and nonsense ages are ignored.
    const kept = await stub.relaying([
      { id: "pr-a", ageMs: 2000 },
      { id: "not-in-pool", ageMs: 0 },
      { id: "pr-b", ageMs: -5 },
      { id: "pr-b", ageMs: Number.NaN },
      { id: "pr-b", ageMs: 10 },
    ]);
    expect(kept).toEqual({ ok: true, kept: 2 });
    let seen = await progress();
    expect([...seen.keys()].sort()).toEqual(["pr-a", "pr-b"]);
    expect(seen.get("pr-a")!.ageMs).toBeGreaterThanOrEqual(2000);
    expect(seen.get("pr-b")!.ageMs).toBeLessThan(1000);
    // A notice older than what is known moves nothing back; a fresher one, carried on a route call, does.
    await stub.relaying([{ id: "pr-b", ageMs: 60_000 }]);
    expect((await progress()).get("pr-b")!.ageMs).toBeLessThan(1000);
    await stub.route({
      fleetVersion: "pr-1",
      blocks: [2],
      promptTokens: 16,
      relaying: [{ id: "pr-a", ageMs: 0 }],
    });
    seen = await progress();
    expect(seen.get("pr-a")!.ageMs).toBeLessThan(1000);
    // Evidence only: no lease ended, nothing counted.
    const s = await stub.stats();
    if (!s.ok) throw new Error(s.message);
    expect(s.leases).toBe(2);
    expect(s.usage.completed).toBe(0);
  });
});
