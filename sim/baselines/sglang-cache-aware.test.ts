import { describe, expect, it } from "vitest";
import type { RouteContext } from "../../src/routing/types";
import { createSglangCacheAware } from "./sglang-cache-aware";
import { SglangTree } from "./sglang-tree";
import { keys, seededRandom, testFleet, testRequest } from "./test-fleet";

const ctx = (now = 0): RouteContext => ({ now, random: seededRandom(1) });

describe("SglangTree", () => {
  it("matches the longest prefix sent anywhere and names a tenant holding it", () => {
    const tree = new SglangTree();
    tree.insert(keys(1, 8), "a");
    tree.insert([...keys(1, 4), ...keys(2, 4, 4)], "b");
    expect(tree.prefixMatch(keys(1, 8))).toEqual({ matchedBlocks: 8, tenant: "a" });
    const diverging = tree.prefixMatch([...keys(1, 4), ...keys(2, 2, 4), ...keys(3, 2)]);
    expect(diverging).toEqual({ matchedBlocks: 6, tenant: "b" });
    expect(tree.tenantMatch(keys(1, 8), "b")).toBe(4);
    expect(tree.tenantSize("a")).toBe(8);
    expect(tree.tenantSize("b")).toBe(8);
  });

  it("evicts a tenant's least recently used leaves down to the size bound, keeping other tenants", () => {
    const tree = new SglangTree();
    tree.insert(keys(1, 4), "a"); // oldest
    tree.insert(keys(2, 4), "a");
    tree.insert(keys(3, 4), "a"); // newest
    tree.insert(keys(1, 4), "b");
    tree.evictBySize(8);
    expect(tree.tenantSize("a")).toBe(8);
    expect(tree.tenantMatch(keys(1, 4), "a")).toBe(0);
    expect(tree.tenantMatch(keys(3, 4), "a")).toBe(4);
    expect(tree.tenantMatch(keys(1, 4), "b")).toBe(4);
  });

  it("removes a tenant and prunes nodes nobody holds", () => {
    const tree = new SglangTree();
    tree.insert(keys(1, 3), "a");
    tree.removeTenant("a");
    expect(tree.prefixMatch(keys(1, 3))).toEqual({ matchedBlocks: 0, tenant: undefined });
  });
});

describe("SGLang cache_aware baseline", () => {
  it("sends requests sharing a prefix to the worker that first got it (sticky above cache_threshold)", () => {
    const policy = createSglangCacheAware();
    const shared = keys(7, 40);
    const first = testRequest([...shared, ...keys(100, 4)]);
    // Worker 2 is the least loaded, so the first (unmatched) request lands there.
    const fleet = testFleet({ n: 3, inflight: [2, 1, 0] });
    const p1 = policy.pick(first, fleet, ctx());
    expect(p1).toEqual({ index: 2, reason: "ring" });
    policy.onRouted?.(first, p1.index, fleet, ctx());

    // Now worker 2 is the busiest; 40 of 44 blocks match (0.91 > 0.3): affinity wins over load.
    const second = testRequest([...shared, ...keys(101, 4)]);
    const busy = testFleet({ n: 3, inflight: [0, 0, 5] });
    const p2 = policy.pick(second, busy, ctx());
    expect(p2).toEqual({ index: 2, reason: "affinity" });
  });

  it("uses shortest queue when the match rate is at or below cache_threshold", () => {
    const policy = createSglangCacheAware();
    const fleet = testFleet({ n: 2, inflight: [0, 0] });
    const seed = testRequest(keys(1, 3));
    policy.onRouted?.(seed, 0, fleet, ctx());
    // 3 of 10 blocks = 0.3, not > 0.3.
    const req = testRequest([...keys(1, 3), ...keys(2, 7)]);
    const pick = policy.pick(req, testFleet({ n: 2, inflight: [3, 1] }), ctx());
    expect(pick).toMatchObject({ index: 1, reason: "ring" });
  });

  it("switches to shortest queue only when imbalanced beyond BOTH thresholds", () => {
    const policy = createSglangCacheAware();
    const shared = keys(3, 32);
    policy.onRouted?.(testRequest(shared), 0, testFleet({ n: 2 }), ctx());
    const req = testRequest(shared);
    // diff 65 > 64 and 100 > 1.5 × 35 = 52.5: imbalanced, shortest queue.
    expect(policy.pick(req, testFleet({ n: 2, inflight: [100, 35] }), ctx())).toMatchObject({
      index: 1,
      reason: "spill",
    });
    // diff 64 is not > 64: balanced, affinity keeps it on worker 0.
    expect(policy.pick(req, testFleet({ n: 2, inflight: [100, 36] }), ctx())).toMatchObject({
      index: 0,
      reason: "affinity",
    });
    // diff 70 > 64 but 210 <= 1.5 × 140: balanced.
    expect(policy.pick(req, testFleet({ n: 2, inflight: [210, 140] }), ctx())).toMatchObject({
      index: 0,
      reason: "affinity",
    });
    // The imbalanced path still records the prefix on the worker it chose.
    policy.onRouted?.(req, 1, testFleet({ n: 2 }), ctx());
    expect(policy.tree.tenantMatch(shared, "b1")).toBe(32);
  });

  it("falls back to the first healthy worker without touching the tree when the matched one is down", () => {
    const policy = createSglangCacheAware();
    const shared = keys(4, 10);
    policy.onRouted?.(testRequest(shared), 2, testFleet({ n: 3 }), ctx());
    const fleet = testFleet({ n: 3, healthy: [false, true, false], inflight: [0, 5, 0] });
    const req = testRequest(shared);
    const pick = policy.pick(req, fleet, ctx());
    expect(pick).toMatchObject({ index: 1, reason: "fallback" });
    policy.onRouted?.(req, 1, fleet, ctx());
    expect(policy.tree.tenantMatch(shared, "b1")).toBe(0);
  });

  it("evicts on the virtual clock, down to max_tree_size converted to blocks", () => {
    // 4 chars/token × 16 tokens/block = 64 chars per block: 640 chars = 10 blocks per worker.
    const policy = createSglangCacheAware({ maxTreeSizeChars: 640, evictionIntervalSecs: 1 });
    const fleet = testFleet({ n: 1 });
    policy.pick(testRequest(keys(1, 1)), fleet, ctx(0));
    for (let g = 10; g < 14; g++) policy.onRouted?.(testRequest(keys(g, 5)), 0, fleet, ctx(0));
    expect(policy.tree.tenantSize("b0")).toBe(20);
    policy.pick(testRequest(keys(1, 1)), fleet, ctx(999));
    expect(policy.tree.tenantSize("b0")).toBe(20);
    policy.pick(testRequest(keys(1, 1)), fleet, ctx(1000));
    expect(policy.tree.tenantSize("b0")).toBe(10);
    expect(policy.tree.tenantMatch(keys(13, 5), "b0")).toBe(5);
  });

  it("forgets removed workers", () => {
    const policy = createSglangCacheAware();
    policy.onRouted?.(testRequest(keys(1, 8)), 1, testFleet({ n: 2 }), ctx());
    policy.onBackendsChanged?.([{ id: "b0", weight: 1, kvCacheTokens: 1024 }]);
    expect(policy.tree.tenantMatch(keys(1, 8), "b1")).toBe(0);
    expect(policy.tree.tenantSize("b1")).toBe(0);
  });
});
