import { describe, expect, it } from "vitest";
import { armOf, PoolRouter } from "./pool-router";
import { seededRandom } from "./seeded-random";
import type { BackendSpec, RouteRequest } from "./types";

const ctx = { now: 0, random: seededRandom(7) };
const spec = (id: string): BackendSpec => ({ id, weight: 1, kvCacheTokens: 64_000 });
const fleet = [spec("a"), spec("b"), spec("c"), spec("d")];
const health = { fall: 1, rise: 1, maxEjectionPercent: 50, probeIntervalMs: 1000 };
/** A request of `blocks` 16-token blocks whose keys start at `base`. */
const req = (base: number, blocks = 16): RouteRequest => ({
  blocks: Array.from({ length: blocks }, (_, i) => base + i),
  promptTokens: blocks * 16,
});

describe("armOf", () => {
  it("splits arm keys by percent, deterministically", () => {
    let b = 0;
    for (let k = 0; k < 20_000; k++) if (armOf(Math.imul(k, 0x9e3779b1) >>> 0, 30) === 1) b++;
    expect(b / 20_000).toBeGreaterThan(0.28);
    expect(b / 20_000).toBeLessThan(0.32);
    expect(armOf(12345, 0)).toBe(0);
    expect(armOf(12345, 100)).toBe(1);
    expect(armOf(777, 50)).toBe(armOf(777, 50));
  });
});

describe("PoolRouter", () => {
  it("keeps a key in one arm, and each arm learns only its own traffic", () => {
    const pool = new PoolRouter(fleet, {
      arms: [
        { policy: "prefix_aware", indexStride: 1 },
        { policy: "least_outstanding", indexStride: 1 },
      ],
      percentB: 50,
    });
    const keyA = 7_500;
    const keyB = 2_500;
    const first = pool.route(req(1000), keyA, ctx);
    expect(first.arm).toBe(0);
    pool.complete(first.ticket, { ok: true, promptTokens: 256, cachedTokens: 0 }, ctx);
    // Arm A learnt the prefix; arm B, asked about the same prompt, knows nothing of it.
    const again = pool.route(req(1000), keyA, ctx);
    expect(again.decision.expectedCachedTokens).toBeGreaterThan(0);
    expect(again.decision.backendId).toBe(first.decision.backendId);
    const other = pool.route(req(1000), keyB, ctx);
    expect(other.arm).toBe(1);
    expect(other.decision.availableCachedTokens).toBe(0);
    const s = pool.stats(0);
    expect(s.arms.map((a) => a.policy)).toEqual(["prefix_aware", "least_outstanding"]);
    expect(pool.inflight(first.decision.backendId)).toBeGreaterThanOrEqual(1);
  });

  it("the shadow decides with its own index and never changes the serving decision", () => {
    const plain = new PoolRouter(fleet, { arms: [{ policy: "round_robin", indexStride: 1 }] });
    const shadowed = new PoolRouter(fleet, {
      arms: [{ policy: "round_robin", indexStride: 1 }],
      shadow: { policy: "prefix_aware", indexStride: 1 },
    });
    const captured: number[] = [];
    for (let i = 0; i < 12; i++) {
      const r = req(5000, 8 + i);
      const p = plain.route(r, 0, ctx);
      const s = shadowed.route(r, 0, ctx);
      expect(s.decision.backendId).toBe(p.decision.backendId);
      expect(s.shadow).toBeDefined();
      captured.push(s.shadow!.expectedCachedTokens);
      const outcome = {
        ok: true,
        promptTokens: r.promptTokens,
        cachedTokens: p.decision.expectedCachedTokens,
      };
      plain.complete(p.ticket, outcome, ctx);
      shadowed.complete(s.ticket, outcome, ctx);
    }
    // Round robin spreads the growing prompt over four backends; prefix_aware would have kept it on one.
    expect(captured.slice(1).every((c) => c > 0)).toBe(true);
    expect(shadowed.stats(0).shadow?.policy).toBe("prefix_aware");
  });

  it("firstToken(): the shadow learns the lateness only from a first token on the backend it chose too", () => {
    const pool = new PoolRouter(fleet, {
      arms: [{ policy: "round_robin", indexStride: 1 }],
      shadow: { policy: "prefix_aware", indexStride: 1 },
    });
    // Round robin serves a, b, c, d in turn; the shadow, on an empty fleet, keeps choosing where it would.
    const elsewhere: ReturnType<typeof pool.route>[] = [];
    const same: ReturnType<typeof pool.route>[] = [];
    for (let i = 0; i < 4; i++) {
      const r = pool.route(req(100 * (i + 1)), 0, ctx);
      (r.shadow!.backendId === r.decision.backendId ? same : elsewhere).push(r);
    }
    expect(elsewhere.length).toBeGreaterThan(0);
    expect(same.length).toBeGreaterThan(0);
    for (const r of elsewhere) pool.firstToken(r.ticket, { ...ctx, now: 50 });
    expect(pool.stats(0).shadow?.prefillEndOverrunMs).toBeUndefined();
    for (const r of same) pool.firstToken(r.ticket, { ...ctx, now: 50 });
    expect(pool.stats(0).shadow?.prefillEndOverrunMs).toBeTypeOf("number");
  });

  it("shares health: a fault in one arm ejects the backend for both arms and the shadow", () => {
    const pool = new PoolRouter(fleet, {
      arms: [
        { policy: "round_robin", health },
        { policy: "least_outstanding", health },
      ],
      percentB: 50,
      shadow: { policy: "prefix_aware", health },
    });
    const d = pool.route(req(1), 0, ctx);
    pool.complete(d.ticket, { ok: false, backendFault: true }, ctx);
    expect(pool.ejectedIds()).toEqual([d.decision.backendId]);
    for (let k = 0; k < 40; k++) {
      const r = pool.route(req(100 + k * 50), k, ctx);
      expect(r.decision.backendId).not.toBe(d.decision.backendId);
      expect(r.shadow!.backendId).not.toBe(d.decision.backendId);
    }
  });

  it("a health reset (a backend's url changed) puts it back in every arm's rotation at once", () => {
    const pool = new PoolRouter(fleet, {
      arms: [
        { policy: "round_robin", health },
        { policy: "least_outstanding", health },
      ],
      percentB: 50,
    });
    const d = pool.route(req(1), 0, ctx);
    pool.complete(d.ticket, { ok: false, backendFault: true }, ctx);
    const ejected = d.decision.backendId;
    pool.route(req(50), 0, ctx); // every arm's view is built with the backend out
    pool.route(req(51), 1, ctx);
    pool.resetHealth(ejected);
    expect(pool.ejectedIds()).toEqual([]);
    const seen = new Set<string>();
    for (let k = 0; k < 40; k++) seen.add(pool.route(req(100 + k * 50), k, ctx).decision.backendId);
    expect(seen.has(ejected)).toBe(true);
  });

  it("a drained backend takes no new requests, finishes what it has, and comes back when undrained", () => {
    const pool = new PoolRouter(fleet, { arms: [{ policy: "least_outstanding" }] });
    const held = pool.route(req(1), 0, ctx);
    const id = held.decision.backendId;
    expect(pool.setDrained(id, true)).toBe(true);
    expect(pool.setDrained("nope", true)).toBe(false);
    expect(pool.drainedIds()).toEqual([id]);
    for (let k = 0; k < 20; k++) expect(pool.route(req(100 + k), k, ctx).decision.backendId).not.toBe(id);
    expect(pool.inflight(id)).toBe(1);
    pool.complete(held.ticket, { ok: true }, ctx);
    expect(pool.inflight(id)).toBe(0);
    pool.setDrained(id, false);
    const seen = new Set<string>();
    for (let k = 0; k < 20; k++) seen.add(pool.route(req(200 + k), k, ctx).decision.backendId);
    expect(seen.has(id)).toBe(true);
  });

  it("resetAffinity forgets the index, and requests in flight settle harmlessly", () => {
    const pool = new PoolRouter(fleet, { arms: [{ policy: "prefix_aware", indexStride: 1 }] });
    const first = pool.route(req(9000), 0, ctx);
    pool.complete(first.ticket, { ok: true, promptTokens: 256, cachedTokens: 0 }, ctx);
    const pending = pool.route(req(9000), 0, ctx);
    expect(pending.decision.expectedCachedTokens).toBeGreaterThan(0);
    pool.resetAffinity();
    pool.complete(pending.ticket, { ok: false }, ctx);
    const after = pool.route(req(9000), 0, ctx);
    expect(after.decision.expectedCachedTokens).toBe(0);
    expect(after.decision.availableCachedTokens).toBe(0);
    expect(pool.stats(0).arms[0]!.indexBlocks).toBe(16);
  });
});

describe("PoolRouter.drain", () => {
  it("refuses to drain the last backend not drained, and names unknown ids", () => {
    const pool = new PoolRouter([spec("a"), spec("b")], { arms: [{ policy: "round_robin" }] });
    expect(pool.drain("a", true)).toBe("ok");
    expect(pool.drain("b", true)).toBe("last_backend");
    expect(pool.drain("a", true)).toBe("ok");
    expect(pool.drain("zz", true)).toBe("unknown_backend");
    expect(pool.drain("a", false)).toBe("ok");
    expect(pool.drain("b", true)).toBe("ok");
    expect(pool.drainedIds()).toEqual(["b"]);
  });

  it("mayEmpty (a cell whose pool has backends in rotation in other cells): the last may go, and then none is usable", () => {
    const pool = new PoolRouter([spec("a"), spec("b")], { arms: [{ policy: "round_robin" }] });
    expect(pool.drain("a", true)).toBe("ok");
    expect(pool.anyUsable()).toBe(true);
    expect(pool.drain("b", true, true)).toBe("ok");
    expect(pool.drainedIds()).toEqual(["a", "b"]);
    expect(pool.anyUsable()).toBe(false);
  });
});

describe("PoolRouter.fitForRetry", () => {
  it("a throttled backend is not fit for a retry until its retry-after ends", () => {
    const pool = new PoolRouter([spec("a"), spec("b")], { arms: [{ policy: "round_robin" }] });
    expect(pool.fitForRetry(["a"], 0)).toBe(true);
    // b answered 429 with a 30 s retry-after: a retry off a would only meet its 429 again.
    pool.throttle("b", 30_000);
    expect(pool.fitForRetry(["a"], 0)).toBe(false);
    expect(pool.fitForRetry(["a"], 29_999)).toBe(false);
    expect(pool.fitForRetry(["a"], 30_000)).toBe(true);
  });

  it("avoids every backend the request's attempts failed on", () => {
    const pool = new PoolRouter([spec("a"), spec("b"), spec("c")], { arms: [{ policy: "round_robin" }] });
    expect(pool.fitForRetry(["a", "b"], 0)).toBe(true);
    pool.throttle("c", 10_000);
    expect(pool.fitForRetry(["a", "b"], 0)).toBe(false);
    expect(pool.fitForRetry(["a"], 0)).toBe(true);
  });
});

describe("PoolRouter.restore", () => {
  it("counts a re-announced request in flight on its backend until it completes, and learns nothing from it", () => {
    const pool = new PoolRouter(fleet, { arms: [{ policy: "prefix_aware", indexStride: 1 }] });
    expect(pool.restore("nowhere", 0, 0)).toBeUndefined();
    const t = pool.restore("b", 0, -5_000)!;
    expect(pool.inflight("b")).toBe(1);
    // The load bound sees it: the next decision reports it in flight there.
    expect(pool.stats(0).arms[0]!.backends.find((x) => x.id === "b")!.inflight).toBe(1);
    pool.complete(t, { ok: true, promptTokens: 256, cachedTokens: 256, outputTokens: 64 }, ctx);
    expect(pool.inflight("b")).toBe(0);
    // Completing twice changes nothing, and the index holds nothing of it.
    pool.complete(t, { ok: true }, ctx);
    expect(pool.inflight("b")).toBe(0);
    expect(pool.route(req(1000), 0, ctx).decision.availableCachedTokens).toBe(0);
  });

  it("a restored request's fault judges its backend like a routed one's", () => {
    const pool = new PoolRouter(fleet, { arms: [{ policy: "least_outstanding", indexStride: 1, health }] });
    const t = pool.restore("c", 0, 0)!;
    expect(pool.complete(t, { ok: false, backendFault: true }, ctx)).toBe("ejected");
    expect(pool.ejectedIds()).toEqual(["c"]);
  });
});
