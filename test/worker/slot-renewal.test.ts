/**
 * A key's slot outlives neither its holder nor a long stream's need: through
 * the real Worker, the slot is granted for KEY_SLOT_TTL_MS (not the 600 s
 * LEASE_TTL that locked a capped key out after a restart, ops-pass.md); and
 * through the real client, renewer and KeyLimiterDO (with short periods, so no
 * test sleeps a minute), a holder that keeps renewing keeps its slot past the
 * TTL and one that stops renewing (a dead isolate) frees it a TTL later.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { KEY_SLOT_TTL_MS } from "../../src/routing/defaults";
import { acquireSlot } from "../../src/worker/key-limits/key-limiter-client";
import { SlotRenewer } from "../../src/worker/key-limits/slot-renewal";
import { chatBody, keyInflightReaches, keyLimiter, longPrompt, openWithEnv } from "./helpers";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * The TTL of these tests' slots. The renewer's period is a third of it, so a slot is named at least every two
 * periods and a renewal may come a whole period late before the slot lapses: 400 ms of spare here, which no
 * loaded machine's timers and RPCs use up (a 100 ms spare did not always hold on two busy cores).
 */
const TTL_MS = 1200;

describe("key slot lifetime", () => {
  it("a slot held by a stream through the gateway ends within KEY_SLOT_TTL_MS unless renewed", async () => {
    const k = `sr-ttl-${crypto.randomUUID()}`;
    const keys = { GATEWAY_API_KEYS: `${k} max_concurrent=1` };
    const before = Date.now();
    const { res, settled } = await openWithEnv(keys, "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${k}`, "content-type": "application/json" },
      body: chatBody(longPrompt("ttl", 40), "a long answer", { stream: true, max_tokens: 400 }),
    });
    expect(res.status).toBe(200);
    const stub = await keyLimiter(k);
    // What a holder that dies now leaves behind: the slot's deadline and the alarm that frees it.
    const { deadlines, alarm } = await runInDurableObject(stub, async (_i, state) => ({
      deadlines: state.storage.sql
        .exec<{ deadline: number }>("SELECT deadline FROM slots")
        .toArray()
        .map((r) => r.deadline),
      alarm: await state.storage.getAlarm(),
    }));
    expect(deadlines).toHaveLength(1);
    expect(deadlines[0]!).toBeGreaterThan(before);
    expect(deadlines[0]!).toBeLessThanOrEqual(Date.now() + KEY_SLOT_TTL_MS);
    expect(alarm).toBe(deadlines[0]);
    await res.body!.cancel();
    await settled();
    await keyInflightReaches(k, 0);
  });

  it("a holder that keeps renewing keeps its slot past the TTL; once it stops, the slot ends a TTL later", async () => {
    const keyId = `sr-renew-${crypto.randomUUID()}`;
    const ttlMs = TTL_MS;
    const renewer = new SlotRenewer(ttlMs / 3);
    const slot = await acquireSlot(env.KEY_LIMITER, { keyId, limit: 1, ttlMs });
    expect(slot.kind).toBe("granted");
    if (slot.kind !== "granted") return;
    const stop = renewer.hold(keyId, slot.slotId, slot.renew);
    await sleep(3 * ttlMs);
    const other = () => acquireSlot(env.KEY_LIMITER, { keyId, limit: 1, ttlMs: 60_000 });
    expect((await other()).kind).toBe("refused");
    const stub = env.KEY_LIMITER.getByName(keyId);
    expect((await stub.stats()).renewed).toBeGreaterThanOrEqual(3);
    // The holder dies: no release, no more renewals.
    stop();
    const stoppedAt = Date.now();
    await sleep(ttlMs + 50);
    // A renewal still in flight when it stopped moves the deadline on by as long as that call took: wait (bounded).
    let granted = (await other()).kind;
    while (granted !== "granted" && Date.now() < stoppedAt + 3 * ttlMs) {
      await sleep(20);
      granted = (await other()).kind;
    }
    expect(granted).toBe("granted");
    expect((await stub.stats()).expired).toBe(1);
  });

  it("many holders of one key renew it with one call per period between them", async () => {
    const keyId = `sr-batch-${crypto.randomUUID()}`;
    const ttlMs = TTL_MS;
    const periodMs = ttlMs / 3;
    const renewer = new SlotRenewer(periodMs);
    // All five granted first, then held: a renewal that fired while the later ones were still being acquired
    // (a period is shorter than five calls on a loaded machine) would name fewer than five.
    const slots = [];
    for (let i = 0; i < 5; i++) {
      const slot = await acquireSlot(env.KEY_LIMITER, { keyId, limit: 5, ttlMs });
      if (slot.kind !== "granted") throw new Error(`slot ${i}: ${slot.kind}`);
      slots.push(slot);
    }
    const heldAt = Date.now();
    const stops = slots.map((slot) => renewer.hold(keyId, slot.slotId, slot.renew));
    await sleep(2 * ttlMs);
    const s = await env.KEY_LIMITER.getByName(keyId).stats();
    const periods = (Date.now() - heldAt) / periodMs;
    expect(s.inflight).toBe(5);
    expect(s.expired).toBe(0);
    // 6 periods (or more, on a late timer): each renewal names all 5 slots, so 5 per call, at most one call per
    // period that began; one call per stream would be ~30 calls.
    expect(s.renewed % 5).toBe(0);
    expect(s.renewed / 5).toBeGreaterThanOrEqual(4);
    expect(s.renewed / 5).toBeLessThanOrEqual(Math.floor(periods) + 1);
    for (const stop of stops) stop();
  });
});
