import { describe, expect, it } from "vitest";
import type { RouteContext } from "../../src/routing/types";
import { LlmdPrefixIndexer } from "./llmd-prefix-indexer";
import { createLlmdScheduler } from "./llmd-scheduler";
import { keys, seededRandom, testFleet, testRequest } from "./test-fleet";

const ctx = (seed = 1): RouteContext => ({ now: 0, random: seededRandom(seed) });

describe("LlmdPrefixIndexer", () => {
  it("counts, per pod, the walked hashes it holds, stopping where no pod has one", () => {
    const ix = new LlmdPrefixIndexer();
    ix.add(keys(1, 4), "a", 100);
    ix.add([...keys(1, 2), ...keys(2, 4, 2)], "b", 100);
    const m = ix.matchLongestPrefix([...keys(1, 4), ...keys(9, 2)]);
    expect(m.get("a")).toBe(4);
    expect(m.get("b")).toBe(2);
  });

  it("evicts a pod's least recently added hashes past its GPU-block capacity", () => {
    const ix = new LlmdPrefixIndexer();
    ix.add(keys(1, 3), "a", 4);
    ix.add(keys(2, 2), "a", 4); // capacity 4: the oldest hash of group 1 goes
    expect(ix.lruSize("a")).toBe(4);
    expect(ix.matchLongestPrefix(keys(1, 3)).get("a")).toBeUndefined();
    expect(ix.matchLongestPrefix(keys(2, 2)).get("a")).toBe(2);
  });
});

describe("llm-d weighted scorer baseline", () => {
  it("adds prefix ×3 + queue ×2 + KV ×2 exactly as the scorers define them", () => {
    const policy = createLlmdScheduler();
    const shared = keys(5, 8);
    const warm = testRequest(shared);
    const fleet0 = testFleet({ n: 3, signals: [{}, {}, {}] });
    policy.onRouted?.(warm, 0, fleet0, ctx());

    // 6 of 8 request blocks cached on b0 (its LRU has blocks 0..7 of group 5; request diverges at 6).
    const req = testRequest([...keys(5, 6), ...keys(6, 2, 6)]);
    const fleet = testFleet({
      n: 3,
      signals: [
        { waiting: 4, kvUsage: 0.5 },
        { waiting: 0, kvUsage: 0.1 },
        { waiting: 2, kvUsage: 0.9 },
      ],
    });
    const pick = policy.pick(req, fleet, ctx());
    const s = policy.lastScores();
    expect(s.get(0)).toEqual({ prefix: 0.75, queue: 0, kvCache: 0.5, total: 3 * 0.75 + 0 + 2 * 0.5 });
    expect(s.get(1)!.queue).toBe(1);
    expect(s.get(1)!.total).toBeCloseTo(0 + 2 * 1 + 2 * 0.9, 12);
    expect(s.get(2)!.queue).toBe(0.5);
    expect(s.get(2)!.total).toBeCloseTo(0 + 2 * 0.5 + 2 * 0.1, 12);
    // b1 (3.8) beats b0 (3.25): the prefix holder loses to load, so this is a spill.
    expect(pick).toEqual({ index: 1, reason: "spill" });
  });

  it("stays on the prefix holder when load is equal (sticky on a shared prefix)", () => {
    const policy = createLlmdScheduler();
    const shared = keys(8, 20);
    const fleet = testFleet({ n: 4, signals: [{}, {}, {}, {}] });
    const first = testRequest([...shared, ...keys(30, 2)]);
    const p1 = policy.pick(first, fleet, ctx(3));
    expect(p1.reason).toBe("ring");
    policy.onRouted?.(first, p1.index, fleet, ctx());
    for (let k = 0; k < 5; k++) {
      const req = testRequest([...shared, ...keys(40 + k, 2)]);
      const p = policy.pick(req, fleet, ctx(10 + k));
      expect(p).toEqual({ index: p1.index, reason: "affinity" });
      policy.onRouted?.(req, p.index, fleet, ctx());
    }
  });

  it("gives a neutral queue score of 1 when all queues are equal and skips unhealthy pods", () => {
    const policy = createLlmdScheduler();
    const fleet = testFleet({
      n: 3,
      healthy: [true, false, true],
      signals: [{ waiting: 3 }, {}, { waiting: 3 }],
    });
    policy.pick(testRequest(keys(1, 2)), fleet, ctx());
    const s = policy.lastScores();
    expect([...s.keys()]).toEqual([0, 2]);
    expect(s.get(0)!.queue).toBe(1);
  });

  it("caps matching at maxPrefixBlocksToMatch", () => {
    const policy = createLlmdScheduler({ maxPrefixBlocksToMatch: 4 });
    const fleet = testFleet({ n: 2, signals: [{}, {}] });
    const req = testRequest(keys(2, 10));
    policy.onRouted?.(req, 1, fleet, ctx());
    expect(policy.indexer.lruSize("b1")).toBe(4);
    policy.pick(testRequest(keys(2, 10)), fleet, ctx());
    expect(policy.lastScores().get(1)!.prefix).toBe(1);
  });

  it("refuses to run without engine signals (they exist only in the simulator)", () => {
    const policy = createLlmdScheduler();
    expect(() => policy.pick(testRequest(keys(1, 1)), testFleet({ n: 2 }), ctx())).toThrow(/engineSignals/);
  });
});
