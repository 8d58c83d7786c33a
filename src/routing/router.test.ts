import { describe, expect, it } from "vitest";
import { createPolicy, isPolicyName, learnsFirstTokens } from "./registry";
import { NoHealthyBackendError, Router } from "./router";
import { seededRandom } from "./seeded-random";
import { type BackendSpec, POLICY_NAMES, type PolicyName, type RoutingPolicy } from "./types";

const ctx = { now: 0, random: seededRandom(1) };
const spec = (id: string, weight = 1, kvCacheTokens = 16_000): BackendSpec => ({ id, weight, kvCacheTokens });

describe("Router", () => {
  it.each([
    [[spec("a"), spec("a")], /backends\[1\]\.id: duplicate id "a"/],
    [[spec("a", 0)], /backends\[0\]\.weight: must be a finite number > 0, got 0/],
    [[spec("a"), spec("b", 1, -5)], /backends\[1\]\.kvCacheTokens/],
    [[spec("")], /backends\[0\]\.id/],
  ])("rejects bad backends with the field named (%#)", (backends, message) => {
    expect(() => new Router(backends, { policy: "round_robin" })).toThrow(message);
  });

  it("rejects bad options", () => {
    expect(() => new Router([spec("a")], { policy: "random", blockTokens: 0 })).toThrow(/blockTokens/);
    expect(() => new Router([spec("a")], { policy: "random", balanceFactor: Number.NaN })).toThrow(
      /balanceFactor/,
    );
    expect(() => new Router([spec("a")], { policy: "nope" as PolicyName })).toThrow(
      /unknown routing policy "nope"/,
    );
  });

  it("firstToken() tells the policy the request and its backend, until the request completes", () => {
    const heard: [number, number][] = [];
    const policy: RoutingPolicy = {
      name: "heard",
      pick: () => ({ index: 1, reason: "ring" }),
      onFirstToken: (req, index) => heard.push([req.promptTokens, index]),
    };
    const router = new Router([spec("a"), spec("b")], { policy });
    const t = router.route({ blocks: [1], promptTokens: 16 }, ctx);
    router.firstToken(t.ticket, { ...ctx, now: 5 });
    expect(heard).toEqual([[16, 1]]);
    expect(router.totalInflight).toBe(1);
    router.complete(t.ticket, { ok: true }, ctx);
    router.firstToken(t.ticket, ctx);
    expect(heard).toEqual([[16, 1]]);
  });

  it("counts in flight, and complete() is idempotent per ticket", () => {
    const router = new Router([spec("a"), spec("b")], { policy: "least_outstanding" });
    const t1 = router.route({ blocks: [1], promptTokens: 16 }, ctx);
    const t2 = router.route({ blocks: [2], promptTokens: 16 }, ctx);
    expect(router.totalInflight).toBe(2);
    expect(router.inflight("a") + router.inflight("b")).toBe(2);
    router.complete(t1.ticket, { ok: true }, ctx);
    router.complete(t1.ticket, { ok: true }, ctx);
    expect(router.totalInflight).toBe(1);
    router.complete(t2.ticket, { ok: false }, ctx);
    expect(router.totalInflight).toBe(0);
    expect(router.inflight("zzz")).toBe(0);
  });

  it("setBackends keeps index, health and in-flight of backends that stay; removed ones' tickets are no-ops", () => {
    const router = new Router([spec("a"), spec("b"), spec("c")], {
      policy: "consistent_hash",
      indexStride: 1,
    });
    const blocks = [10, 11, 12, 13, 14];
    const first = router.route({ blocks, promptTokens: 80 }, ctx);
    const home = first.decision.backendId;
    const others = ["a", "b", "c"].filter((id) => id !== home);
    router.setHealthy(others[0]!, false);
    // Reorder, drop one non-home backend, add a new one.
    router.setBackends([spec("new"), spec(others[0]!), spec(home)]);
    expect(router.inflight(home)).toBe(1);
    expect(router.totalInflight).toBe(1);
    const s = router.stats();
    expect(s.backends.map((b) => b.id)).toEqual(["new", others[0], home]);
    expect(s.backends.find((b) => b.id === others[0])!.healthy).toBe(false);
    expect(s.backends.find((b) => b.id === home)!.indexBlocks).toBe(5);
    router.complete(first.ticket, { ok: true }, ctx);
    expect(router.totalInflight).toBe(0);

    const gone = router.route({ blocks: [99], promptTokens: 16 }, ctx);
    router.setBackends([spec(gone.decision.backendId === "new" ? home : "new")]);
    expect(() => router.complete(gone.ticket, { ok: true }, ctx)).not.toThrow();
    expect(router.totalInflight).toBe(0);
  });

  it("resizes a backend's index when its KV capacity changes", () => {
    const router = new Router([spec("a", 1, 16 * 100)], { policy: "random", indexStride: 1 });
    router.route({ blocks: Array.from({ length: 80 }, (_, j) => j + 1), promptTokens: 1280 }, ctx);
    router.setBackends([spec("a", 1, 16 * 10)]);
    const b = router.stats().backends[0]!;
    expect(b.indexCapacityBlocks).toBe(10);
    expect(b.indexBlocks).toBe(10);
  });

  it("throws NoHealthyBackendError (code no_healthy_backend) with no healthy or no backends", () => {
    const empty = new Router([], { policy: "prefix_aware" });
    try {
      empty.route({ blocks: [], promptTokens: 3 }, ctx);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(NoHealthyBackendError);
      expect((e as NoHealthyBackendError).code).toBe("no_healthy_backend");
    }
    const router = new Router([spec("a")], { policy: "prefix_aware" });
    expect(() => router.setHealthy("b", false)).toThrow(/unknown backend id "b"/);
  });

  it("refuses a policy's pick of an unhealthy or unknown backend", () => {
    const bad: RoutingPolicy = {
      name: "bad",
      pick: () => ({ index: 1, reason: "ring" }),
    };
    const router = new Router([spec("a"), spec("b")], { policy: bad });
    router.setHealthy("b", false);
    expect(() => router.route({ blocks: [], promptTokens: 1 }, ctx)).toThrow(/picked unhealthy backend b/);
    const worse: RoutingPolicy = {
      name: "worse",
      pick: () => ({ index: 9, reason: "ring" }),
    };
    expect(() =>
      new Router([spec("a")], { policy: worse }).route({ blocks: [], promptTokens: 1 }, ctx),
    ).toThrow(/index 9/);
  });

  it("corrects the index from reported cached tokens and counts it in stats", () => {
    const router = new Router([spec("a", 1, 16 * 1000)], { policy: "prefix_aware", indexStride: 1 });
    const old = { blocks: [1, 2, 3, 4, 5], promptTokens: 90 };
    router.complete(router.route(old, ctx).ticket, { ok: true, cachedTokens: 0 }, ctx);
    const convo = { blocks: [20, 21, 22, 23, 24, 25], promptTokens: 100 };
    router.complete(router.route(convo, ctx).ticket, { ok: true, cachedTokens: 0 }, ctx);
    const again = router.route(convo, ctx);
    expect(again.decision.expectedCachedTokens).toBe(96);
    router.complete(again.ticket, { ok: true, cachedTokens: 32 }, ctx);
    const s = router.stats();
    expect(s.correctedBlocks).toBe(5);
    expect(s.backends[0]!.indexBlocks).toBe(6);
    expect(s.indexBytes).toBeGreaterThan(0);
  });

  it("charges a completion's answer (outputTokens) to its backend's index capacity", () => {
    // 12 entries of 16 tokens. An old prefix of 5 blocks, then a request of 6 whose 64-token answer and
    // partial block held ceil(164 / 16) − 6 = 5 blocks more: 16 > 12, so the old prefix's 4 least recent
    // blocks were reused by the engine. Reported without an answer, the old prefix is believed whole.
    const expectedOld = (outputTokens: number | undefined): number => {
      const router = new Router([spec("a", 1, 16 * 12)], { policy: "prefix_aware", indexStride: 1 });
      const old = { blocks: [1, 2, 3, 4, 5], promptTokens: 90 };
      router.complete(router.route(old, ctx).ticket, { ok: true, cachedTokens: 0, outputTokens: 1 }, ctx);
      const next = { blocks: [20, 21, 22, 23, 24, 25], promptTokens: 100 };
      const outcome = { ok: true, cachedTokens: 0, ...(outputTokens === undefined ? {} : { outputTokens }) };
      router.complete(router.route(next, ctx).ticket, outcome, ctx);
      return router.route(old, ctx).decision.expectedCachedTokens;
    };
    expect(expectedOld(undefined)).toBe(80);
    expect(expectedOld(64)).toBe(16);
  });
});

describe("Router index stride default", () => {
  it("indexes every 64 tokens: stride 4 at 16-token blocks, 1 at 64 or 512", () => {
    expect(new Router([spec("a")], { policy: "random" }).indexStride).toBe(4);
    expect(new Router([spec("a")], { policy: "random", blockTokens: 64 }).indexStride).toBe(1);
    expect(new Router([spec("a")], { policy: "random", blockTokens: 512 }).indexStride).toBe(1);
    expect(new Router([spec("a")], { policy: "random", blockTokens: 32 }).indexStride).toBe(2);
  });
});

describe("Router with indexStride 4", () => {
  it("indexes every 4th block: matches to 4 blocks' resolution, capacity and stats in blocks", () => {
    const router = new Router([spec("a", 1, 16 * 1000)], { policy: "prefix_aware", indexStride: 4 });
    const req = { blocks: Array.from({ length: 10 }, (_, j) => 100 + j), promptTokens: 170 };
    router.complete(router.route(req, ctx).ticket, { ok: true, cachedTokens: 0 }, ctx);
    const again = router.route(req, ctx);
    expect(again.decision.expectedCachedTokens).toBe(8 * 16);
    const s = router.stats();
    expect(s.indexStride).toBe(4);
    expect(s.backends[0]!.indexBlocks).toBe(8);
    expect(s.backends[0]!.indexCapacityBlocks).toBe(1000);
    // The engine hit 9 blocks (more than the 8 we resolve): no correction.
    router.complete(again.ticket, { ok: true, cachedTokens: 9 * 16 }, ctx);
    expect(router.stats().correctedBlocks).toBe(0);
    expect(() => new Router([spec("a")], { policy: "random", indexStride: 0 })).toThrow(/indexStride/);
  });
});

describe("registry", () => {
  it("creates every named policy, fresh each time, and rejects unknown names", () => {
    for (const name of [
      "prefix_aware",
      "least_outstanding",
      "round_robin",
      "random",
      "consistent_hash",
    ] as const) {
      const p = createPolicy(name);
      expect(p.name).toBe(name);
      expect(createPolicy(name)).not.toBe(p);
    }
    expect(() => createPolicy("sticky" as PolicyName)).toThrow(/unknown routing policy "sticky"/);
    expect(isPolicyName("random")).toBe(true);
    expect(isPolicyName("Random")).toBe(false);
  });

  it("says which policies learn from first tokens: exactly those with an onFirstToken hook", () => {
    for (const name of POLICY_NAMES)
      expect(learnsFirstTokens(name), name).toBe(typeof createPolicy(name).onFirstToken === "function");
  });
});

describe("Router health: one owner for ejection, throttling and fail-open", () => {
  const health = { fall: 2, rise: 2, maxEjectionPercent: 50, probeIntervalMs: 1000 };

  it("ejects a backend after `fall` faulted outcomes and stops routing to it until its probes pass", () => {
    const router = new Router([spec("a"), spec("b")], { policy: "round_robin", health });
    const at = (now: number) => ({ now, random: seededRandom(now) });
    const onA = () => {
      for (;;) {
        const r = router.route({ blocks: [], promptTokens: 1 }, at(1));
        if (r.decision.backendId === "a") return r.ticket;
        router.complete(r.ticket, { ok: true }, at(1));
      }
    };
    const t1 = onA();
    const t2 = onA();
    expect(router.complete(t1, { ok: false, backendFault: true }, at(2))).toBeNull();
    expect(router.complete(t2, { ok: false, backendFault: true }, at(3))).toBe("ejected");
    expect(router.ejectedIds()).toEqual(["a"]);
    for (let k = 0; k < 10; k++) {
      const r = router.route({ blocks: [], promptTokens: 1 }, at(4));
      expect(r.decision.backendId).toBe("b");
      router.complete(r.ticket, { ok: true }, at(4));
    }
    expect(router.dueProbes(1002)).toEqual([]);
    expect(router.dueProbes(1003)).toEqual(["a"]);
    expect(router.probed("a", true, 1003)).toBeNull();
    expect(router.probed("a", true, 2003)).toBe("restored");
    const back = new Set<string>();
    for (let k = 0; k < 4; k++) {
      const r = router.route({ blocks: [], promptTokens: 1 }, at(3000));
      back.add(r.decision.backendId);
      router.complete(r.ticket, { ok: true }, at(3000));
    }
    expect(back).toEqual(new Set(["a", "b"]));
  });

  it("routes around a throttled backend until its retry-after passes, but to it when all are throttled", () => {
    const router = new Router([spec("a"), spec("b")], { policy: "least_outstanding" });
    const go = (now: number, k: number) => {
      const r = router.route({ blocks: [], promptTokens: 1 }, { now, random: seededRandom(k) });
      router.complete(r.ticket, { ok: true }, { now, random: seededRandom(k) });
      return r.decision.backendId;
    };
    router.throttle("a", 5000);
    for (let k = 0; k < 6; k++) expect(go(100, k)).toBe("b");
    expect(router.stats(100).backends.find((b) => b.id === "a")!.throttledUntil).toBe(5000);
    router.throttle("b", 5000);
    const both = new Set<string>();
    for (let k = 0; k < 20; k++) both.add(go(200, k));
    expect(both).toEqual(new Set(["a", "b"]));
    // After the window both are ordinary candidates again.
    router.throttle("b", 9000);
    for (let k = 0; k < 6; k++) expect(go(5000, k)).toBe("a");
  });

  it("observe() teaches the index and health what a decision made elsewhere did, with nothing in flight", () => {
    const router = new Router([spec("a"), spec("b")], { policy: "prefix_aware", indexStride: 1, health });
    const req = { blocks: [5, 6, 7, 8, 9], promptTokens: 90 };
    router.observe("b", req, { ok: true, cachedTokens: 0 }, 10, ctx);
    expect(router.totalInflight).toBe(0);
    const r = router.route(req, ctx);
    expect(r.decision.backendId).toBe("b");
    expect(r.decision.expectedCachedTokens).toBe(80);
    router.observe("a", req, { ok: false, backendFault: true }, 10, ctx);
    expect(router.observe("a", req, { ok: false, backendFault: true }, 11, ctx)).toBe("ejected");
    expect(router.observe("nope", req, { ok: true }, 11, ctx)).toBeNull();
  });
});

describe("Router.route(avoid)", () => {
  it("leaves a retry's failed backend out of the decision unless it is the only one available", () => {
    const router = new Router([spec("a"), spec("b")], { policy: "prefix_aware", indexStride: 1 });
    const req = { blocks: [1, 2, 3, 4, 5, 6], promptTokens: 100 };
    const first = router.route(req, ctx);
    router.complete(first.ticket, { ok: true }, ctx);
    const home = first.decision.backendId;
    const other = home === "a" ? "b" : "a";
    expect(router.route(req, ctx).decision.backendId).toBe(home);
    expect(router.route(req, ctx, home).decision.backendId).toBe(other);
    router.setHealthy(other, false);
    expect(router.route(req, ctx, home).decision.backendId).toBe(home);
    expect(router.stats().backends.find((b) => b.id === home)!.healthy).toBe(true);
  });

  it("leaves out every backend a request's attempts failed on, while another is available", () => {
    // A retry that met a busy backend moves on again (attempts.ts): neither the busy one nor the first attempt's
    // backend, which the prompt's affinity would otherwise bring it back to.
    const router = new Router([spec("a"), spec("b"), spec("c")], { policy: "prefix_aware", indexStride: 1 });
    const req = { blocks: [1, 2, 3, 4, 5, 6], promptTokens: 100 };
    const first = router.route(req, ctx);
    router.complete(first.ticket, { ok: true }, ctx);
    const home = first.decision.backendId;
    const [second, third] = ["a", "b", "c"].filter((id) => id !== home) as [string, string];
    expect(router.route(req, ctx, [home, second]).decision.backendId).toBe(third);
    expect(router.route(req, ctx, [second, home]).decision.backendId).toBe(third);
    // None left but the avoided: the decision is taken among them, as for one avoided backend.
    router.setHealthy(third, false);
    expect([home, second]).toContain(router.route(req, ctx, [home, second]).decision.backendId);
  });
});
