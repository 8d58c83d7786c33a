/**
 * What a RouterDO must not forget when it is evicted (or restarted by a
 * deploy): a fresh instance on the same storage (evictDurableObject keeps the
 * storage and drops the instance) still applies the end of a lease its
 * predecessor granted — a backend fault reaches health, the counters count
 * it — and counts in flight again the leases a Worker re-announces.
 */
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { RouterDO } from "../../durable-objects/router-do";
import { STATS_SAVE_MS } from "../../src/routing/defaults";
import { testPoolSpec } from "../../src/worker/router/pool-spec-fixture";
import type { HeldLease, PoolSpec } from "../../src/worker/router/router-rpc";
import {
  authHeaders,
  chatBody,
  gatewayWithEnv,
  longPrompt,
  MODEL,
  openWithEnv,
  poolStats,
  settle,
  spareUrls,
} from "./helpers";

function spec(...backends: { id: string; url: string }[]): PoolSpec {
  return testPoolSpec(backends, { policy: "least_outstanding", healthProbeSeconds: 30 });
}

interface Granted {
  readonly leaseId: string;
  readonly held: HeldLease;
}

/**
 * Routes until a lease lands on `id`; returns it, held as the Worker holds it. The others stay open
 * (least_outstanding would never pick `id` again if they ended), and are pushed to `others`.
 */
async function leaseOn(
  stub: DurableObjectStub<RouterDO>,
  version: string,
  id: string,
  others: string[] = [],
): Promise<Granted> {
  for (let i = 0; i < 200; i++) {
    const r = await stub.route({ fleetVersion: version, blocks: [i + 1], promptTokens: 16 });
    if (!r.ok) throw new Error(r.message);
    if (r.backendId === id) {
      if (r.instance === undefined) throw new Error("the RouterDO did not say its instance");
      return { leaseId: r.leaseId, held: { backendId: id, instance: r.instance, arm: r.arm, ageMs: 0 } };
    }
    others.push(r.leaseId);
  }
  throw new Error(`no lease on ${id}`);
}

async function adopt(stub: DurableObjectStub<RouterDO>, version: string, s: PoolSpec): Promise<string> {
  const r = await stub.route({ fleetVersion: version, spec: s, blocks: [], promptTokens: 1 });
  if (!r.ok) throw new Error(r.message);
  await stub.complete(r.leaseId, { ok: true });
  return r.instance!;
}

async function statsOf(stub: DurableObjectStub<RouterDO>) {
  const s = await stub.stats();
  if (!s.ok) throw new Error(s.message);
  return s;
}

describe("RouterDO eviction", () => {
  it("a fault reported after a fresh instance took over ejects the backend like before, and counts once", async () => {
    const [a, b] = spareUrls() as [string, string];
    const stub = env.ROUTER.getByName("evict-fault");
    const before = await adopt(stub, "ev1", spec({ id: "f-a", url: a }, { id: "f-b", url: b }));
    // Three streams on f-b, open when the object is evicted.
    const open: Granted[] = [];
    for (let k = 0; k < 3; k++) open.push(await leaseOn(stub, "ev1", "f-b"));
    const failedBefore = (await statsOf(stub)).usage.failed;
    await evictDurableObject(stub);
    const fresh = await statsOf(stub);
    expect(fresh.leases).toBe(0); // the fresh instance never saw them
    // A report without what the Worker holds is unknown to it, as before.
    expect((await stub.complete(open[0]!.leaseId, { ok: false, failure: "timeout" })).ok).toBe(false);
    // With it, each fault counts: the third ejects f-b (EJECT_AFTER_FAULTS = 3).
    for (const g of open) {
      const r = await stub.complete(
        g.leaseId,
        { ok: false, failure: "timeout" },
        { ...g.held, ageMs: 20_000 },
      );
      expect(r).toEqual({ ok: true, backendId: "f-b" });
    }
    let s = await statsOf(stub);
    expect(s.backends.find((x) => x.id === "f-b")!.healthy).toBe(false);
    expect(s.usage.failed).toBe(3);
    expect(s.usage.ejections).toBe(1);
    // The same end reported again (a carried report resent) is skipped.
    const again = await stub.completeAll(
      open.map((g) => ({
        leaseId: g.leaseId,
        outcome: { ok: false, failure: "timeout" as const },
        held: g.held,
      })),
    );
    expect(again.ended).toBe(0);
    s = await statsOf(stub);
    expect(s.usage.failed).toBe(3);
    // A lease of this very instance, already ended, stays skipped too.
    const mine = await stub.route({ fleetVersion: "ev1", blocks: [900], promptTokens: 16 });
    if (!mine.ok) throw new Error(mine.message);
    expect(mine.instance).not.toBe(before);
    await stub.complete(mine.leaseId, { ok: true });
    const held: HeldLease = { backendId: mine.backendId, instance: mine.instance!, arm: "a", ageMs: 0 };
    expect((await stub.complete(mine.leaseId, { ok: true }, held)).ok).toBe(false);
    expect(failedBefore).toBe(0);
  });

  it("leases a Worker re-announces to a fresh instance count in flight again until they end", async () => {
    const [a, b] = spareUrls() as [string, string];
    const stub = env.ROUTER.getByName("evict-reopen");
    await adopt(stub, "er1", spec({ id: "r-a", url: a }, { id: "r-b", url: b }));
    const others: string[] = [];
    const onA = await leaseOn(stub, "er1", "r-a", others);
    const onB = await leaseOn(stub, "er1", "r-b", others);
    expect((await statsOf(stub)).leases).toBe(2 + others.length);
    await evictDurableObject(stub);
    const next = await stub.route({ fleetVersion: "er1", blocks: [500], promptTokens: 16 });
    if (!next.ok) throw new Error(next.message);
    expect(next.instance).not.toBe(onA.held.instance);
    expect(next.cellInflight).toBe(1); // the two streams are uncounted: what this repairs
    const reopened = await stub.reopen([
      { leaseId: onA.leaseId, held: { ...onA.held, ageMs: 15_000 } },
      { leaseId: onB.leaseId, held: { ...onB.held, ageMs: 15_000 } },
      // A lease of this instance, and one whose deadline has passed, are not reopened.
      {
        leaseId: next.leaseId,
        held: { backendId: next.backendId, instance: next.instance!, arm: "a", ageMs: 0 },
      },
      { leaseId: "long-gone", held: { ...onA.held, ageMs: 10_000_000 } },
    ]);
    expect(reopened).toEqual({ ok: true, reopened: 2 });
    let s = await statsOf(stub);
    expect(s.leases).toBe(3);
    expect(s.backends.reduce((n, x) => n + x.inflight, 0)).toBe(3);
    expect(s.backends.find((x) => x.id === "r-a")!.inflight).toBeGreaterThanOrEqual(1);
    // Re-announced twice (another isolate, or a resend): counted once.
    expect((await stub.reopen([{ leaseId: onA.leaseId, held: onA.held }])).reopened).toBe(0);
    const completedBefore = s.usage.completed;
    await stub.complete(next.leaseId, { ok: true });
    await stub.complete(onA.leaseId, { ok: true, promptTokens: 16, cachedTokens: 0 }, onA.held);
    await stub.complete(onB.leaseId, { ok: false, failure: "stream_error" }, onB.held);
    s = await statsOf(stub);
    expect(s.leases).toBe(0);
    expect(s.backends.every((x) => x.inflight === 0)).toBe(true);
    expect(s.usage.completed).toBe(completedBefore + 2);
    expect(s.usage.failed).toBe(1);
    expect(s.backends.find((x) => x.id === "r-b")!.consecutiveFailures).toBe(1);
    // Ended here: neither its end nor its re-announcement counts again.
    expect((await stub.complete(onA.leaseId, { ok: true }, onA.held)).ok).toBe(false);
    expect((await stub.reopen([{ leaseId: onA.leaseId, held: onA.held }])).reopened).toBe(0);
  });
});

describe("RouterDO eviction and the key share", () => {
  it("a lease re-announced with its key counts toward that key's share in the fresh instance", async () => {
    const [a, b] = spareUrls() as [string, string];
    const stub = env.ROUTER.getByName("evict-reopen-key");
    // Two backends at a bound of 2: four slots, one kept free for keys below their share (10%, rounded up).
    const s = testPoolSpec(
      [
        { id: "rk-a", url: a },
        { id: "rk-b", url: b },
      ],
      {
        policy: "least_outstanding",
        healthProbeSeconds: 30,
        maxInflightPerBackend: 2,
        keyShareHeadroomPercent: 10,
      },
    );
    await adopt(stub, "rk1", s);
    const keyA = "00000000000000aa";
    const keyB = "00000000000000bb";
    const ask = (key: string, block: number) =>
      stub.route({ fleetVersion: "rk1", blocks: [block], promptTokens: 16, clientKey: key });
    // A holds three of the four slots when the object is evicted.
    const held: { leaseId: string; held: HeldLease }[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await ask(keyA, 100 + i);
      if (!r.ok) throw new Error(r.message);
      held.push({
        leaseId: r.leaseId,
        held: { backendId: r.backendId, instance: r.instance!, arm: r.arm, ageMs: 0 },
      });
    }
    await evictDurableObject(stub);
    // B asks the fresh instance (a contending key from now on), and leaves.
    const b1 = await ask(keyB, 200);
    if (!b1.ok) throw new Error(b1.message);
    await stub.complete(b1.leaseId, { ok: true });
    // The Worker re-announces A's leases with A's key; a malformed key is counted under none, as before.
    const reopened = await stub.reopen([...held.map((h) => ({ ...h, key: keyA }))]);
    expect(reopened.reopened).toBe(3);
    // A holds 3 of 4, past its share of 2, and the one free slot is B's: A is shed, B is admitted.
    const a4 = await ask(keyA, 104);
    expect(a4.ok).toBe(false);
    expect(!a4.ok && a4.code === "at_capacity" ? a4.overShare : undefined).toEqual({ held: 3, share: 2 });
    const b2 = await ask(keyB, 201);
    expect(b2.ok).toBe(true);
    if (b2.ok) await stub.complete(b2.leaseId, { ok: true });
    for (const h of held) await stub.complete(h.leaseId, { ok: true }, h.held);
    expect((await statsOf(stub)).leases).toBe(0);
  });

  it("a re-announced key that is not a key id is counted under no key", async () => {
    const [a, b] = spareUrls() as [string, string];
    const stub = env.ROUTER.getByName("evict-reopen-badkey");
    const s = testPoolSpec(
      [
        { id: "rb-a", url: a },
        { id: "rb-b", url: b },
      ],
      {
        policy: "least_outstanding",
        healthProbeSeconds: 30,
        maxInflightPerBackend: 2,
        keyShareHeadroomPercent: 10,
      },
    );
    await adopt(stub, "rb1", s);
    const keyA = "00000000000000aa";
    const ask = (key: string, block: number) =>
      stub.route({ fleetVersion: "rb1", blocks: [block], promptTokens: 16, clientKey: key });
    const held: { leaseId: string; held: HeldLease }[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await ask(keyA, 300 + i);
      if (!r.ok) throw new Error(r.message);
      held.push({
        leaseId: r.leaseId,
        held: { backendId: r.backendId, instance: r.instance!, arm: r.arm, ageMs: 0 },
      });
    }
    await evictDurableObject(stub);
    const b1 = await ask("00000000000000bb", 400);
    if (!b1.ok) throw new Error(b1.message);
    await stub.complete(b1.leaseId, { ok: true });
    const bad = ["X".repeat(100_000), "00000000000000AA", 42] as unknown as string[];
    const reopened = await stub.reopen(held.map((h, i) => ({ ...h, key: bad[i]! })));
    expect(reopened.reopened).toBe(3);
    // None of them counts for any key: A holds none here, below its share, and is admitted to the last slot.
    const a4 = await ask(keyA, 304);
    expect(a4.ok).toBe(true);
    if (a4.ok) await stub.complete(a4.leaseId, { ok: true });
    for (const h of held) await stub.complete(h.leaseId, { ok: true }, h.held);
  });
});

describe("RouterDO counters", () => {
  it("the /admin/stats figures survive an eviction: saved by the alarm, restored by the fresh instance", async () => {
    const [a, b] = spareUrls() as [string, string];
    const stub = env.ROUTER.getByName("evict-counters");
    await adopt(stub, "ec1", spec({ id: "k-a", url: a }, { id: "k-b", url: b }));
    for (let i = 0; i < 12; i++) {
      const r = await stub.route({ fleetVersion: "ec1", blocks: [i + 1], promptTokens: 64 });
      if (!r.ok) throw new Error(r.message);
      await stub.complete(
        r.leaseId,
        i % 4 === 3
          ? { ok: false, failure: "server_error", status: 502 }
          : {
              ok: true,
              promptTokens: 64,
              cachedTokens: 16 * (i % 3),
              ttftMs: 20 + 7 * i,
              durationMs: 300 + 50 * i,
              outputTokens: 10,
            },
      );
    }
    // A change of the counters asks for an alarm within STATS_SAVE_MS (the save is never on a route call).
    const alarmAt = await runInDurableObject(stub, (_i, state) => state.storage.getAlarm());
    expect(alarmAt).not.toBeNull();
    expect(alarmAt!).toBeLessThanOrEqual(Date.now() + STATS_SAVE_MS);
    const before = await stub.snapshot();
    if (!before.ok) throw new Error(before.message);
    // The alarm saves when it is due (at most every STATS_SAVE_MS: the adopting request's alarm saved first).
    await new Promise((r) => setTimeout(r, Math.max(0, alarmAt! - Date.now()) + 100));
    await runDurableObjectAlarm(stub); // if the runtime has not run it yet
    expect(await runInDurableObject(stub, (_i, state) => state.storage.getAlarm())).toBeNull();
    await evictDurableObject(stub);
    const after = await stub.snapshot();
    if (!after.ok) throw new Error(after.message);
    expect(after.snapshot.arms).toEqual(before.snapshot.arms);
    expect(after.snapshot.counters).toEqual(before.snapshot.counters);
    expect(after.snapshot.since).toBe(before.snapshot.since);
    expect(after.snapshot.arms[0]!.routed).toBe(13);
    expect(after.snapshot.arms[0]!.ttftMs.count).toBe(9);
    const usage = (await statsOf(stub)).usage;
    expect([usage.completed, usage.failed]).toEqual([10, 3]);
    // And they go on counting from there.
    const r = await stub.route({ fleetVersion: "ec1", blocks: [99], promptTokens: 64 });
    if (!r.ok) throw new Error(r.message);
    await stub.complete(r.leaseId, { ok: true, ttftMs: 5, durationMs: 50 });
    const more = await stub.snapshot();
    expect(more.ok && more.snapshot.arms[0]!.routed).toBe(14);
    expect(more.ok && more.snapshot.arms[0]!.ttftMs.count).toBe(10);
  });
});

describe("through the Worker", () => {
  /** Every report sent at once (the suite's route deadline is one no loaded machine misses: vitest.config.ts). */
  const vars = { REPORT_CARRY_MS: "0" };
  const chat = (seed: string, extra: Record<string, unknown>): RequestInit => ({
    method: "POST",
    headers: authHeaders(),
    body: chatBody(longPrompt(seed, 40), "q", extra),
  });

  it("a stream open across an eviction is counted in flight again after the next request, and its end is applied", async () => {
    expect(
      (await gatewayWithEnv(vars, "/v1/chat/completions", chat("ev-warm", { max_tokens: 2 }))).status,
    ).toBe(200);
    await settle();
    const stream = await openWithEnv(
      vars,
      "/v1/chat/completions",
      chat("ev-stream", { stream: true, max_tokens: 400 }),
    );
    expect(stream.res.status).toBe(200);
    const reader = stream.res.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    expect((await poolStats()).leases).toBe(1);
    const endedBefore = (await poolStats()).usage;
    await evictDurableObject(env.ROUTER.getByName(MODEL));
    expect((await poolStats()).leases).toBe(0); // what the edge pass saw: the open stream forgotten
    // The next request's route answer comes from another instance: the isolate re-announces its stream.
    expect(
      (await gatewayWithEnv(vars, "/v1/chat/completions", chat("ev-next", { max_tokens: 2 }))).status,
    ).toBe(200);
    const during = await poolStats();
    expect(during.leases).toBe(1);
    expect(during.backends.reduce((n, b) => n + b.inflight, 0)).toBe(1);
    // The client leaves: the stream's end reaches the new instance and releases its slot.
    await reader.cancel("client went away");
    await stream.settled();
    const after = await poolStats();
    expect(after.leases).toBe(0);
    expect(after.backends.every((b) => b.inflight === 0)).toBe(true);
    // The fresh instance's counters (since it started; persisted counters are another matter) saw both ends.
    expect(after.usage.completed + after.usage.failed).toBeGreaterThanOrEqual(2);
    expect(endedBefore.completed).toBeGreaterThanOrEqual(1);
  });
});
