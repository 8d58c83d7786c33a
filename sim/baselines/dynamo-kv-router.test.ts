import { describe, expect, it } from "vitest";
import type { RouteContext } from "../../src/routing/types";
import { createDynamoKvRouter, isFirstTokenAware, softmaxSample } from "./dynamo-kv-router";
import { keys, seededRandom, testFleet, testRequest } from "./test-fleet";

const ctx = (seed = 1): RouteContext => ({ now: 0, random: seededRandom(seed) });

describe("Dynamo KV router baseline", () => {
  it("computes logit = weight × prefill blocks not cached + active decode blocks, and picks the minimum", () => {
    const policy = createDynamoKvRouter();
    const shared = keys(1, 10);
    // b0 caches all 10 shared blocks, b1 caches 4, b2 nothing.
    const fleet = testFleet({ n: 3, cached: [shared, shared.slice(0, 4), []] });
    // Load b0 with an in-flight request of 30 unrelated blocks (480 prompt tokens, nothing cached).
    const busy = testRequest(keys(9, 30));
    policy.onRouted?.(busy, 0, testFleet({ n: 3, cached: [[], [], []] }), ctx());

    const req = testRequest([...shared, ...keys(2, 2, 10)], 16, 8); // 12 blocks + 8 tokens = 200 tokens
    const pick = policy.pick(req, fleet, ctx());
    const c = policy.lastCosts();
    // b0: prefill (480 + 200 − 160)/16 = 32.5; decode 30 active + 12 new = 42 → 74.5
    expect(c.get(0)).toEqual({ overlapBlocks: 10, prefillTokens: 520, decodeBlocks: 42, logit: 74.5 });
    // b1: prefill (200 − 64)/16 = 8.5; decode 12 → 20.5
    expect(c.get(1)).toEqual({ overlapBlocks: 4, prefillTokens: 136, decodeBlocks: 12, logit: 20.5 });
    // b2: prefill 200/16 = 12.5; decode 12 → 24.5
    expect(c.get(2)).toEqual({ overlapBlocks: 0, prefillTokens: 200, decodeBlocks: 12, logit: 24.5 });
    expect(pick).toEqual({ index: 1, reason: "spill" });
  });

  it("stays on the worker that caches a shared prefix while load is even", () => {
    const policy = createDynamoKvRouter();
    const shared = keys(3, 64);
    const fleet = testFleet({ n: 4, cached: [[], [], shared, []] });
    const req = testRequest([...shared, ...keys(4, 4, 64)]);
    expect(policy.pick(req, fleet, ctx())).toEqual({ index: 2, reason: "affinity" });
    expect(policy.lastCosts().get(2)!.overlapBlocks).toBe(64);
  });

  it("dedupes shared blocks among in-flight requests and releases them on completion", () => {
    const policy = createDynamoKvRouter();
    const fleet = testFleet({ n: 1, cached: [[]] });
    const a = testRequest([...keys(5, 8), ...keys(6, 2, 8)]);
    const b = testRequest([...keys(5, 8), ...keys(7, 2, 8)]);
    policy.onRouted?.(a, 0, fleet, ctx());
    policy.onRouted?.(b, 0, fleet, ctx());
    const seq = policy.activeFor("b0");
    expect(seq.activeBlocks()).toBe(12);
    expect(seq.activeTokens()).toBe(320);
    policy.onFirstToken(a, 0, ctx());
    expect(seq.activeTokens()).toBe(160);
    policy.onCompleted?.(a, 0, { ok: true }, ctx());
    expect(seq.activeBlocks()).toBe(10);
    policy.onCompleted?.(b, 0, { ok: true }, ctx());
    expect(seq.activeBlocks()).toBe(0);
    expect(seq.activeTokens()).toBe(0);
    expect(isFirstTokenAware(policy)).toBe(true);
  });

  it("counts prompt blocks past the routing prefix cap as new, unshared blocks", () => {
    const policy = createDynamoKvRouter();
    const fleet = testFleet({ n: 1, cached: [[]] });
    // 4 keys given but the prompt has 10 full blocks.
    policy.pick({ blocks: keys(1, 4), promptTokens: 160 }, fleet, ctx());
    expect(policy.lastCosts().get(0)!.decodeBlocks).toBe(10);
  });

  it("breaks equal logits by the smaller cache tree, then at random", () => {
    const policy = createDynamoKvRouter();
    const fleet = testFleet({
      n: 3,
      signals: [{ kvUsage: 0.5 }, { kvUsage: 0.2 }, { kvUsage: 0.9 }],
      cached: [[], [], []],
    });
    expect(policy.pick(testRequest(keys(1, 4)), fleet, ctx()).index).toBe(1);
  });

  it("is deterministic for a seed at temperature > 0 and follows the softmax", () => {
    const run = (seed: number): number[] => {
      const policy = createDynamoKvRouter({ routerTemperature: 1 });
      const random = seededRandom(seed);
      const fleet = testFleet({ n: 3, cached: [keys(1, 8), [], []] });
      return Array.from(
        { length: 20 },
        () => policy.pick(testRequest(keys(1, 8)), fleet, { now: 0, random }).index,
      );
    };
    expect(run(42)).toEqual(run(42));
    // Logits [0, 8, 8]: normalised by range 8 → weights e^0, e^-1, e^-1.
    const first = 1 / (1 + 2 * Math.exp(-1));
    expect(softmaxSample([0, 8, 8], 1, () => first - 1e-9)).toBe(0);
    expect(softmaxSample([0, 8, 8], 1, () => first + 1e-9)).toBe(1);
  });
});
