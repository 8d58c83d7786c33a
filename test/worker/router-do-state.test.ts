/**
 * The RouterDO's durable state under change: a restarted object reloads its
 * fleet and its backends' health from SQLite; a backend id pointed at a new
 * address starts with a clean record; a fleet change with leases in flight
 * keeps the in-flight accounting exact; its stats say since when each
 * figure counts (an evicted object's in-memory figures start over).
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { RouterDO } from "../../durable-objects/router-do";
import { testPoolSpec } from "../../src/worker/router/pool-spec-fixture";
import type { PoolSpec } from "../../src/worker/router/router-rpc";
import { spareUrls } from "./helpers";

function spec(...backends: { id: string; url: string }[]): PoolSpec {
  return testPoolSpec(backends, { policy: "least_outstanding", healthProbeSeconds: 30 });
}

/** Hands the RouterDO a fleet version (one routed and completed request). */
async function adopt(stub: DurableObjectStub<RouterDO>, version: string, s: PoolSpec): Promise<void> {
  const r = await stub.route({ fleetVersion: version, spec: s, blocks: [], promptTokens: 1 });
  if (!r.ok) throw new Error(r.message);
  await stub.complete(r.leaseId, { ok: true });
}

/** Routes until a lease lands on `id`, completing the others; returns that lease. */
async function leaseOn(stub: DurableObjectStub<RouterDO>, version: string, id: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const r = await stub.route({ fleetVersion: version, blocks: [i + 1], promptTokens: 16 });
    if (!r.ok) throw new Error(r.message);
    if (r.backendId === id) return r.leaseId;
    await stub.complete(r.leaseId, { ok: true });
  }
  throw new Error(`no lease on ${id}`);
}

async function eject(stub: DurableObjectStub<RouterDO>, version: string, id: string): Promise<void> {
  for (let k = 0; k < 3; k++)
    await stub.complete(await leaseOn(stub, version, id), { ok: false, failure: "timeout" });
}

describe("RouterDO state", () => {
  it("ends the leases a route call carries before it decides, and a batch by completeAll; unknown ones are skipped", async () => {
    const [a, b] = spareUrls() as [string, string];
    const stub = env.ROUTER.getByName("state-carried-completes");
    await adopt(stub, "v-carry", spec({ id: "c-a", url: a }, { id: "c-b", url: b }));
    const first = await stub.route({ fleetVersion: "v-carry", blocks: [1], promptTokens: 16 });
    const second = await stub.route({ fleetVersion: "v-carry", blocks: [2], promptTokens: 16 });
    if (!first.ok || !second.ok) throw new Error("route failed");
    expect(second.cellInflight).toBe(2);
    // The third call carries the first's end: that slot is free before the decision (1 open + this one).
    const third = await stub.route({
      fleetVersion: "v-carry",
      blocks: [3],
      promptTokens: 16,
      completes: [{ leaseId: first.leaseId, outcome: { ok: true, promptTokens: 16, cachedTokens: 0 } }],
    });
    if (!third.ok) throw new Error(third.message);
    expect(third.cellInflight).toBe(2);
    const mid = await stub.stats();
    expect(mid.ok && mid.usage.completed).toBe(2); // adopt's request and the carried one
    const done = await stub.completeAll([
      { leaseId: second.leaseId, outcome: { ok: true } },
      { leaseId: first.leaseId, outcome: { ok: true } }, // already ended: skipped
      { leaseId: "no-such-lease", outcome: { ok: false, failure: "timeout" } },
      { leaseId: third.leaseId, outcome: { ok: false, failure: "timeout" } },
    ]);
    expect(done).toEqual({ ok: true, ended: 2 });
    const after = await stub.stats();
    if (!after.ok) throw new Error(after.message);
    expect(after.leases).toBe(0);
    expect(after.backends.every((x) => x.inflight === 0)).toBe(true);
    expect([after.usage.completed, after.usage.failed]).toEqual([3, 1]);
  });

  it("routes with a spec from before ENGINE_SCRAPE_MS, BACKEND_CHECK_SECONDS and KEY_SHARE_HEADROOM_PERCENT existed (a stored spec, or a Worker of the previous version)", async () => {
    const [a, b] = spareUrls() as [string, string];
    const stub = env.ROUTER.getByName("state-older-spec");
    const {
      engineScrapeMs: _,
      maxInflightPerBackend: __,
      backendCheckSeconds: ___,
      keyShareHeadroomPercent: ____,
      ...older
    } = spec({ id: "o-a", url: a }, { id: "o-b", url: b });
    await adopt(stub, "v-old", older as PoolSpec);
    const r = await stub.route({ fleetVersion: "v-old", blocks: [7], promptTokens: 16 });
    expect(r.ok).toBe(true);
    if (r.ok) await stub.complete(r.leaseId, { ok: true });
    const stats = await stub.stats();
    expect(stats.ok && stats.backends.length).toBe(2);
  });

  it("a restarted RouterDO reloads its fleet and its backends' health from storage", async () => {
    const [a, b] = spareUrls() as [string, string];
    const stub = env.ROUTER.getByName("state-restart");
    const s = spec({ id: "r-a", url: a }, { id: "r-b", url: b });
    await adopt(stub, "v1", s);
    await eject(stub, "v1", "r-b");
    const before = await stub.stats();
    if (!before.ok) throw new Error(before.message);
    expect(before.backends.find((x) => x.id === "r-b")!.healthy).toBe(false);
    // A fresh instance on the same storage: what a restart (eviction, deploy, crash) gives.
    const reloaded = await runInDurableObject(stub, async (_instance, state) => {
      const fresh = new RouterDO(state, env);
      await state.blockConcurrencyWhile(async () => {});
      return fresh.stats();
    });
    if (!reloaded.ok) throw new Error(reloaded.message);
    expect(reloaded.fleetVersion).toBe("v1");
    const rb = reloaded.backends.find((x) => x.id === "r-b")!;
    expect(rb.healthy).toBe(false);
    expect(rb.nextProbeAt).toBe(before.backends.find((x) => x.id === "r-b")!.nextProbeAt);
    expect(reloaded.backends.find((x) => x.id === "r-a")!.healthy).toBe(true);
  });

  it("stats say since when they count: a restarted object's in-memory figures from its own start, the stored ones on", async () => {
    const [a, b] = spareUrls() as [string, string];
    const stub = env.ROUTER.getByName("state-since");
    const t0 = Date.now();
    await adopt(stub, "s1", spec({ id: "s-a", url: a }, { id: "s-b", url: b }));
    // The alarm saves the counters (STATS_SAVE_MS after a change; the first change at once).
    await runDurableObjectAlarm(stub).catch(() => false);
    const before = await stub.stats();
    if (!before.ok) throw new Error(before.message);
    // A new object starts at its first call.
    expect(before.instanceStartedAt).toBeGreaterThanOrEqual(t0);
    expect(before.countingSince).toBeGreaterThanOrEqual(before.instanceStartedAt);
    expect(before.router.backends.reduce((n, x) => n + x.routed, 0)).toBe(1);
    // An eviction (idle, a deploy): a fresh instance on the same storage.
    const restartedAt = Date.now();
    const reloaded = await runInDurableObject(stub, async (_instance, state) => {
      const fresh = new RouterDO(state, env);
      await state.blockConcurrencyWhile(async () => {});
      return fresh.stats();
    });
    if (!reloaded.ok) throw new Error(reloaded.message);
    // What lives in memory (decisions per backend, the affinity index, leases) starts over, and says so...
    expect(reloaded.router.backends.reduce((n, x) => n + x.routed, 0)).toBe(0);
    expect(reloaded.instanceStartedAt).toBeGreaterThanOrEqual(restartedAt);
    // ...while the stored counters go on, counted since the same moment as before.
    expect(reloaded.usage.completed).toBe(before.usage.completed);
    expect(reloaded.countingSince).toBe(before.countingSince);
  });

  it("a backend id moved to a new url starts with a clean record", async () => {
    const [a, b] = spareUrls() as [string, string];
    const stub = env.ROUTER.getByName("state-moved");
    await adopt(stub, "m1", spec({ id: "m-a", url: a }, { id: "m-b", url: "http://127.0.0.1:9" }));
    await eject(stub, "m1", "m-b");
    const moved = spec({ id: "m-a", url: a }, { id: "m-b", url: b });
    await adopt(stub, "m2", moved);
    const s = await stub.stats();
    if (!s.ok) throw new Error(s.message);
    const mb = s.backends.find((x) => x.id === "m-b")!;
    expect(mb.healthy).toBe(true);
    expect(mb.consecutiveFailures).toBe(0);
    // ...and the stale row is gone from storage too: a restart does not bring it back.
    const reloaded = await runInDurableObject(stub, async (_i, state) => {
      const fresh = new RouterDO(state, env);
      await state.blockConcurrencyWhile(async () => {});
      return fresh.stats();
    });
    if (!reloaded.ok) throw new Error(reloaded.message);
    expect(reloaded.backends.find((x) => x.id === "m-b")!.healthy).toBe(true);
  });

  it("a fleet change with leases in flight keeps the in-flight accounting exact", async () => {
    const [a, b] = spareUrls() as [string, string];
    const stub = env.ROUTER.getByName("state-change");
    const v1 = spec({ id: "c-a", url: a }, { id: "c-b", url: b });
    await adopt(stub, "c1", v1);
    const onA = await leaseOn(stub, "c1", "c-a");
    const onB = await leaseOn(stub, "c1", "c-b");
    let s = await stub.stats();
    if (!s.ok) throw new Error(s.message);
    const leasesBefore = s.leases;
    // c-b leaves, c-c joins, while both leases are in flight.
    const v2 = spec({ id: "c-a", url: a }, { id: "c-c", url: b });
    const r = await stub.route({ fleetVersion: "c2", spec: v2, blocks: [77], promptTokens: 16 });
    if (!r.ok) throw new Error(r.message);
    s = await stub.stats();
    if (!s.ok) throw new Error(s.message);
    // The lease on the departed backend is dropped with it; the one on c-a stays counted.
    expect(s.leases).toBe(leasesBefore);
    expect(await stub.complete(onB, { ok: true })).toMatchObject({ ok: false, code: "unknown_lease" });
    expect(await stub.complete(onA, { ok: true })).toEqual({ ok: true, backendId: "c-a" });
    expect(await stub.complete(r.leaseId, { ok: true })).toMatchObject({ ok: true });
    s = await stub.stats();
    if (!s.ok) throw new Error(s.message);
    expect(s.router.totalInflight).toBe(0);
    expect(s.backends.map((x) => [x.id, x.inflight])).toEqual([
      ["c-a", 0],
      ["c-c", 0],
    ]);
  });
});
