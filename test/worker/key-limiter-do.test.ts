/**
 * The KeyLimiterDO through its own RPC: grants up to the limit, refuses
 * beyond it, releases idempotently, expires a slot whose release is lost, and
 * keeps its slots across an eviction of the object.
 */
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const limiter = () => env.KEY_LIMITER.getByName(`test-${crypto.randomUUID()}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MINUTE = 60_000;
/**
 * A TTL that outlasts the few calls a test makes before it means the slot to lapse, on any loaded machine
 * (50 ms did not: two RPCs on two busy cores can take longer), and that a test can still wait out.
 */
const SHORT_TTL = 1000;

describe("KeyLimiterDO", () => {
  it("grants slots up to the limit, refuses the next, and grants again after a release", async () => {
    const stub = limiter();
    expect(await stub.acquire({ slotId: "a", limit: 2, ttlMs: MINUTE })).toEqual({ ok: true, inflight: 1 });
    expect(await stub.acquire({ slotId: "b", limit: 2, ttlMs: MINUTE })).toEqual({ ok: true, inflight: 2 });
    const refused = await stub.acquire({ slotId: "c", limit: 2, ttlMs: MINUTE });
    expect(refused).toMatchObject({ ok: false, code: "limit_reached", inflight: 2 });
    expect(await stub.release("a")).toEqual({ ok: true, inflight: 1 });
    expect(await stub.acquire({ slotId: "c", limit: 2, ttlMs: MINUTE })).toEqual({ ok: true, inflight: 2 });
    expect(await stub.stats()).toEqual({
      ok: true,
      inflight: 2,
      acquired: 3,
      refused: 1,
      released: 1,
      expired: 0,
      renewed: 0,
    });
  });

  it("takes the limit from each call: a lowered limit refuses until enough slots end", async () => {
    const stub = limiter();
    for (const id of ["a", "b", "c"]) await stub.acquire({ slotId: id, limit: 3, ttlMs: MINUTE });
    expect((await stub.acquire({ slotId: "d", limit: 2, ttlMs: MINUTE })).ok).toBe(false);
    await stub.release("a");
    expect((await stub.acquire({ slotId: "d", limit: 2, ttlMs: MINUTE })).ok).toBe(false);
    await stub.release("b");
    expect((await stub.acquire({ slotId: "d", limit: 2, ttlMs: MINUTE })).ok).toBe(true);
  });

  it("treats a repeated acquire as one slot and a repeated release as harmless", async () => {
    const stub = limiter();
    await stub.acquire({ slotId: "a", limit: 1, ttlMs: MINUTE });
    expect(await stub.acquire({ slotId: "a", limit: 1, ttlMs: MINUTE })).toEqual({ ok: true, inflight: 1 });
    expect(await stub.release("a")).toEqual({ ok: true, inflight: 0 });
    expect(await stub.release("a")).toMatchObject({ ok: false, code: "unknown_slot", inflight: 0 });
    expect(await stub.release("never")).toMatchObject({ ok: false, code: "unknown_slot" });
  });

  it("expires a slot whose release never comes, at its deadline, without waiting for the alarm", async () => {
    const stub = limiter();
    await stub.acquire({ slotId: "lost", limit: 1, ttlMs: SHORT_TTL });
    expect((await stub.acquire({ slotId: "next", limit: 1, ttlMs: MINUTE })).ok).toBe(false);
    await sleep(SHORT_TTL + 10);
    expect(await stub.acquire({ slotId: "next", limit: 1, ttlMs: MINUTE })).toEqual({
      ok: true,
      inflight: 1,
    });
    expect((await stub.stats()).expired).toBe(1);
  });

  it("expires overdue slots by alarm (an abandoned key's slots do not linger)", async () => {
    const stub = limiter();
    await stub.acquire({ slotId: "a", limit: 5, ttlMs: 50 });
    await stub.acquire({ slotId: "b", limit: 5, ttlMs: MINUTE });
    await sleep(60);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const s = await stub.stats();
    expect(s.inflight).toBe(1);
    expect(s.expired).toBe(1);
    // Re-armed for the remaining slot's deadline.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
  });

  it("keeps its slots across an eviction (they are in SQLite, not only in memory)", async () => {
    const stub = limiter();
    await stub.acquire({ slotId: "a", limit: 2, ttlMs: MINUTE });
    await stub.acquire({ slotId: "b", limit: 2, ttlMs: MINUTE });
    await evictDurableObject(stub);
    const after = await stub.stats();
    expect(after.inflight).toBe(2);
    expect(after.acquired).toBe(0); // a fresh instance: its counters restarted, its slots did not
    expect((await stub.acquire({ slotId: "c", limit: 2, ttlMs: MINUTE })).ok).toBe(false);
    expect(await stub.release("a")).toEqual({ ok: true, inflight: 1 });
  });

  it.each([
    [{ slotId: "", limit: 1, ttlMs: 1000 }, "slotId"],
    [{ slotId: "a", limit: 0, ttlMs: 1000 }, "limit"],
    [{ slotId: "a", limit: 1.5, ttlMs: 1000 }, "limit"],
    [{ slotId: "a", limit: 1, ttlMs: 0 }, "ttlMs"],
  ])("refuses invalid input %j with a message naming the field", async (input, field) => {
    const r = await limiter().acquire(input);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.code).toBe("invalid_input");
      expect(r.message).toContain(field);
    }
  });

  it("a slot whose holder keeps renewing stays held past its TTL; once renewals stop it ends one TTL later", async () => {
    const stub = limiter();
    await stub.acquire({ slotId: "long", limit: 1, ttlMs: SHORT_TTL });
    // Renewed every quarter TTL for three TTLs (a renewal may come 3/4 of a TTL late and still find it held).
    for (let i = 0; i < 12; i++) {
      await sleep(SHORT_TTL / 4);
      expect(await stub.renew({ slotIds: ["long"], limit: 1, ttlMs: SHORT_TTL })).toMatchObject({
        ok: true,
        renewed: 1,
        regranted: 0,
        lost: 0,
        inflight: 1,
      });
    }
    expect((await stub.acquire({ slotId: "other", limit: 1, ttlMs: MINUTE })).ok).toBe(false);
    await sleep(SHORT_TTL + 20);
    // No renewal for longer than the TTL: the alarm frees it (no call needed to notice). The runtime may have
    // run it already; if not, run it now.
    await runDurableObjectAlarm(stub);
    const rows = await runInDurableObject(stub, (_i, state) =>
      state.storage.sql.exec("SELECT id FROM slots").toArray(),
    );
    expect(rows).toEqual([]);
    const s = await stub.stats();
    expect(s).toMatchObject({ inflight: 0, expired: 1, renewed: 12 });
    expect((await stub.acquire({ slotId: "other", limit: 1, ttlMs: MINUTE })).ok).toBe(true);
  });

  it("a renewal never resurrects an expired slot past the limit; with room, it grants it again", async () => {
    const stub = limiter();
    await stub.acquire({ slotId: "a", limit: 2, ttlMs: 50 });
    await stub.acquire({ slotId: "b", limit: 2, ttlMs: MINUTE });
    await sleep(60);
    // a has expired; c takes its place.
    expect(await stub.acquire({ slotId: "c", limit: 2, ttlMs: MINUTE })).toEqual({ ok: true, inflight: 2 });
    expect(await stub.renew({ slotIds: ["a", "b", "c"], limit: 2, ttlMs: MINUTE })).toEqual({
      ok: true,
      renewed: 2,
      regranted: 0,
      lost: 1,
      inflight: 2,
    });
    await stub.release("b");
    expect(await stub.renew({ slotIds: ["a"], limit: 2, ttlMs: MINUTE })).toEqual({
      ok: true,
      renewed: 0,
      regranted: 1,
      lost: 0,
      inflight: 2,
    });
    expect((await stub.acquire({ slotId: "d", limit: 2, ttlMs: MINUTE })).ok).toBe(false);
  });

  it("a renewal that arrives after its slot's release does not grant it again (nobody holds or releases it)", async () => {
    const stub = limiter();
    await stub.acquire({ slotId: "a", limit: 2, ttlMs: MINUTE });
    await stub.acquire({ slotId: "b", limit: 2, ttlMs: MINUTE });
    // b's holder releases on its own stub; a renewal another request sent before it lands after.
    await stub.release("b");
    expect(await stub.renew({ slotIds: ["a", "b"], limit: 2, ttlMs: MINUTE })).toEqual({
      ok: true,
      renewed: 1,
      regranted: 0,
      lost: 1,
      inflight: 1,
    });
    // The key has its room back for a new request.
    expect(await stub.acquire({ slotId: "c", limit: 2, ttlMs: MINUTE })).toEqual({ ok: true, inflight: 2 });
  });

  it("after an eviction too, a renewal that lands after its slot's release does not grant it again", async () => {
    const stub = limiter();
    await stub.acquire({ slotId: "a", limit: 2, ttlMs: MINUTE });
    await stub.acquire({ slotId: "b", limit: 2, ttlMs: MINUTE });
    await evictDurableObject(stub);
    await stub.release("b");
    const r = await stub.renew({ slotIds: ["a", "b"], limit: 2, ttlMs: MINUTE });
    expect(r).toMatchObject({ ok: true, renewed: 1, regranted: 0, lost: 1, inflight: 1 });
  });

  it("a renewal moves the slot's deadline in SQLite too (it survives an eviction)", async () => {
    const stub = limiter();
    await stub.acquire({ slotId: "a", limit: 1, ttlMs: 100 });
    await stub.renew({ slotIds: ["a"], limit: 1, ttlMs: MINUTE });
    await evictDurableObject(stub);
    await sleep(120);
    expect((await stub.stats()).inflight).toBe(1);
  });

  it.each([
    [{ slotIds: [""], limit: 1, ttlMs: 1000 }, "slotIds"],
    [{ slotIds: "a" as unknown as string[], limit: 1, ttlMs: 1000 }, "slotIds"],
    [{ slotIds: ["a"], limit: 0, ttlMs: 1000 }, "limit"],
    [{ slotIds: ["a"], limit: 1, ttlMs: 0 }, "ttlMs"],
  ])("refuses an invalid renewal %j with a message naming the field", async (input, field) => {
    const r = await limiter().renew(input);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.code).toBe("invalid_input");
      expect(r.message).toContain(field);
    }
  });
});
