import { describe, expect, it } from "vitest";
import type { RouteContext } from "../../src/routing/types";
import { createSagemakerPrefixAware } from "./sagemaker-prefix-aware";
import { keys, seededRandom, testFleet, testRequest } from "./test-fleet";

const ctx = (seed = 1): RouteContext => ({ now: 0, random: seededRandom(seed) });

describe("SageMaker PREFIX_AWARE baseline", () => {
  it("keys on the first PrefixLength characters: same leading blocks, same instance", () => {
    // 8192 chars / (4 chars/token × 16 tokens) = 128 blocks of key.
    const policy = createSagemakerPrefixAware();
    const fleet = testFleet({ n: 8 });
    const system = keys(1, 128);
    const homes = new Set<number>();
    for (let q = 0; q < 10; q++)
      homes.add(policy.pick(testRequest([...system, ...keys(100 + q, 8)]), fleet, ctx()).index);
    expect(homes.size).toBe(1);
    // A prompt that differs inside the first 128 blocks has a different key (and, over many, spreads).
    const spread = new Set<number>();
    for (let g = 0; g < 64; g++) spread.add(policy.homeOf(testRequest(keys(200 + g, 130)), fleet));
    expect(spread.size).toBeGreaterThanOrEqual(6);
  });

  it("moves on when the prefix's instance reaches ConcurrencyThreshold, to the least outstanding", () => {
    const policy = createSagemakerPrefixAware({ concurrencyThreshold: 4 });
    const req = testRequest(keys(2, 10));
    const home = policy.homeOf(req, testFleet({ n: 4 }));
    const inflight = [3, 3, 3, 3];
    expect(policy.pick(req, testFleet({ n: 4, inflight }), ctx())).toMatchObject({
      index: home,
      reason: "ring",
    });
    const atThreshold = [2, 2, 2, 2];
    atThreshold[home] = 4;
    atThreshold[(home + 1) % 4] = 1;
    expect(policy.pick(req, testFleet({ n: 4, inflight: atThreshold }), ctx())).toMatchObject({
      index: (home + 1) % 4,
      reason: "spill",
    });
    // Everyone at the threshold: still the least outstanding, marked as a fallback.
    const full = [5, 5, 5, 5];
    full[home] = 6;
    const p = policy.pick(req, testFleet({ n: 4, inflight: full }), ctx());
    expect(p.reason).toBe("fallback");
    expect(p.index).not.toBe(home);
  });

  it("moves only the prefixes of a removed instance (rendezvous hashing)", () => {
    const policy = createSagemakerPrefixAware();
    const all = testFleet({ n: 8 });
    const without3 = testFleet({ n: 8, healthy: [true, true, true, false, true, true, true, true] });
    let moved = 0;
    for (let g = 0; g < 400; g++) {
      const req = testRequest(keys(g + 1, 4));
      const before = policy.homeOf(req, all);
      const after = policy.homeOf(req, without3);
      if (before !== after) {
        moved++;
        expect(before).toBe(3);
      }
    }
    expect(moved).toBeGreaterThan(20);
    expect(moved).toBeLessThan(90);
  });

  it("rejects parameters outside the documented ranges", () => {
    expect(() => createSagemakerPrefixAware({ prefixLength: 512 })).toThrow(/1024\.\.65536/);
    expect(() => createSagemakerPrefixAware({ concurrencyThreshold: 0 })).toThrow(/1\.\.1024/);
  });
});
