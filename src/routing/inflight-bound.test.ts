import { describe, expect, it } from "vitest";
import { anyBound, boundOf, fullBackends, LEASE_ENDS_KEPT, LeaseEndClock } from "./inflight-bound";
import { Router } from "./router";
import { seededRandom } from "./seeded-random";
import type { BackendSpec, PolicyName } from "./types";

const spec = (id: string): BackendSpec => ({ id, weight: 1, kvCacheTokens: 16_000 });

describe("the bound on requests in flight", () => {
  it("a backend's own bound overrides the pool's; 0 is none", () => {
    expect(boundOf({ id: "a" }, 4)).toBe(4);
    expect(boundOf({ id: "a", maxInflight: 9 }, 4)).toBe(9);
    expect(boundOf({ id: "a", maxInflight: 0 }, 4)).toBe(0);
    expect(anyBound([{ id: "a" }, { id: "b" }], 0)).toBe(false);
    expect(anyBound([{ id: "a" }, { id: "b", maxInflight: 3 }], 0)).toBe(true);
    expect(anyBound([{ id: "a", maxInflight: 0 }], 0)).toBe(false);
  });

  it("full: the backends whose in-flight count reached their bound", () => {
    const counts: Record<string, number> = { a: 2, b: 1, c: 5, d: 100 };
    const backends = [{ id: "a" }, { id: "b" }, { id: "c", maxInflight: 6 }, { id: "d", maxInflight: 0 }];
    expect([...fullBackends(backends, 2, (id) => counts[id]!)!]).toEqual(["a"]);
    counts.b = 2;
    counts.c = 6;
    expect([...fullBackends(backends, 2, (id) => counts[id]!)!].sort()).toEqual(["a", "b", "c"]);
  });

  it.each(["prefix_aware", "consistent_hash", "least_outstanding", "round_robin", "random"] as PolicyName[])(
    "%s never routes past the bound while a usable backend has room, and hasRoom says when none has",
    (policy) => {
      const ctx = { now: 0, random: seededRandom(7) };
      const router = new Router([spec("a"), spec("b"), spec("c")], { policy });
      const backends = [{ id: "a" }, { id: "b" }, { id: "c" }];
      // One hot prefix: affinity alone would pile it on one backend.
      const req = { blocks: [1, 2, 3, 4], promptTokens: 64 };
      for (let i = 0; i < 6; i++) {
        const full = fullBackends(backends, 2, (id) => router.inflight(id))!;
        expect(router.hasRoom(full, ctx.now)).toBe(true);
        router.route(req, ctx, undefined, full);
      }
      expect(["a", "b", "c"].map((id) => router.inflight(id))).toEqual([2, 2, 2]);
      const full = fullBackends(backends, 2, (id) => router.inflight(id))!;
      expect(router.hasRoom(full, ctx.now)).toBe(false);
    },
  );

  it("a drained or ejected backend is no room; with every backend full the decision is taken as without the bound", () => {
    const ctx = { now: 0, random: seededRandom(3) };
    const router = new Router([spec("a"), spec("b")], { policy: "least_outstanding" });
    router.setDrained("b", true);
    const req = { blocks: [5], promptTokens: 16 };
    router.route(req, ctx);
    expect(router.hasRoom(new Set(["a"]), ctx.now)).toBe(false);
    router.setDrained("b", false);
    expect(router.hasRoom(new Set(["a"]), ctx.now)).toBe(true);
    router.setHealthy("b", false);
    expect(router.hasRoom(new Set(["a"]), ctx.now)).toBe(false);
    // A retry is not shed: with no room it routes as it would without the bound (to the one usable backend).
    expect(router.route(req, ctx, undefined, new Set(["a"])).decision.backendId).toBe("a");
  });

  it("an empty or absent `full` decides exactly as before (the bound off changes nothing)", () => {
    const decide = (full: ReadonlySet<string> | undefined) => {
      const ctx = { now: 0, random: seededRandom(11) };
      const router = new Router([spec("a"), spec("b"), spec("c"), spec("d")], { policy: "prefix_aware" });
      const out: string[] = [];
      for (let i = 0; i < 200; i++) {
        const blocks = [i % 7, (i * 31) % 13, i];
        out.push(
          router.route({ blocks, promptTokens: 48 }, ctx, i % 9 === 0 ? "b" : undefined, full).decision
            .backendId,
        );
      }
      return out;
    };
    const plain = decide(undefined);
    expect(decide(new Set())).toEqual(plain);
  });
});

describe("LeaseEndClock: a shed request's retry-after", () => {
  it("before any end: the age of the oldest lease in flight, within the bounds", () => {
    const c = new LeaseEndClock();
    expect(c.retryAfterMs(10_000, undefined, 1000, 60_000)).toBe(1000);
    expect(c.retryAfterMs(10_000, 4000, 1000, 60_000)).toBe(6000);
    expect(c.retryAfterMs(100_000, 0, 1000, 60_000)).toBe(60_000);
  });

  it("the mean gap between recent ends, measured up to now: a fleet that stops finishing looks slower", () => {
    const c = new LeaseEndClock();
    for (let t = 1000; t <= 8000; t += 1000) c.ended(t);
    // 8 ends from 1 s to 8 s, asked at 8 s: (8000 - 1000) / 8.
    expect(c.retryAfterMs(8000, 0, 100, 60_000)).toBe(875);
    expect(c.retryAfterMs(40_000, 0, 100, 60_000)).toBe(39_000 / 8);
    // Only the last LEASE_ENDS_KEPT ends count.
    for (let i = 0; i < LEASE_ENDS_KEPT; i++) c.ended(100_000 + i * 10);
    expect(c.retryAfterMs(100_000 + LEASE_ENDS_KEPT * 10, 0, 1, 60_000)).toBe(10);
  });

  it("a burst shed at once is spread over the slots the fleet frees, not sent back together", () => {
    const c = new LeaseEndClock();
    for (let t = 1000; t <= 8000; t += 1000) c.ended(t);
    // One slot frees every 1 s (8 ends since 1 s, asked at 9 s: 8/8 s): three clients shed at once are told
    // to come back one gap apart.
    const gap = (9000 - 1000) / 8;
    expect(c.nextSlotMs(9000, 0, 100, 60_000)).toBe(gap);
    expect(c.nextSlotMs(9000, 0, 100, 60_000)).toBe(2 * gap);
    expect(c.nextSlotMs(9000, 0, 100, 60_000)).toBe(3 * gap);
    // Once the promised times have passed, a new client is one gap away again (measured up to its now).
    expect(c.nextSlotMs(20_000, 0, 100, 60_000)).toBe((20_000 - 1000) / 8);
    // Before any lease has ended, the estimate (the oldest lease's age) is the time to the first end, not a
    // gap: every client of a spike's first seconds is told it, not 12, 23, 34… s.
    const e = new LeaseEndClock();
    for (let i = 0; i < 3; i++) expect(e.nextSlotMs(11_000, 0, 1000, 60_000)).toBe(11_000);
    // The queue never promises past the cap, nor pushes itself beyond it.
    const d = new LeaseEndClock();
    d.ended(0);
    expect(d.nextSlotMs(30_000, 0, 1000, 60_000)).toBe(30_000);
    for (let i = 0; i < 4; i++) expect(d.nextSlotMs(30_000, 0, 1000, 60_000)).toBe(60_000);
    // The next client, 1 s later: still at the cap, not a queue grown past it.
    expect(d.nextSlotMs(31_000, 0, 1000, 60_000)).toBe(60_000);
  });
});
