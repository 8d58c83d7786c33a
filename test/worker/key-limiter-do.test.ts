/**
 * The KeyLimiterDO through its own RPC: grants up to the limit, refuses
 * beyond it, releases idempotently, expires a slot whose release is lost, and
 * keeps its slots across an eviction of the object.
 */
import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const limiter = () => env.KEY_LIMITER.getByName(`test-${crypto.randomUUID()}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MINUTE = 60_000;

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
    await stub.acquire({ slotId: "lost", limit: 1, ttlMs: 50 });
    expect((await stub.acquire({ slotId: "next", limit: 1, ttlMs: MINUTE })).ok).toBe(false);
    await sleep(60);
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
});
