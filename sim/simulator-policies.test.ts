import { describe, expect, it } from "vitest";
import { ALL_POLICIES, parsePolicies, routerFactory, viewOf } from "./policies";
import { prepareWorkload } from "./prepare";
import { runPolicies } from "./run";
import { simulatePolicy } from "./simulator";
import { generatedSharedPrefix } from "./workloads/shared-prefix";

// 16 groups × 8 prompts on 4 backends, at a rate the fleet absorbs.
const w = prepareWorkload(generatedSharedPrefix({ rate: 30, seed: 11, groups: 16, promptsPerGroup: 8 }));
const fleet = { backends: 4, kvCacheTokens: 100_000, seed: 3 };

describe("simulator with the routing core's policies and the peer baselines", () => {
  const report = runPolicies(w, fleet, ALL_POLICIES);
  const by = (name: string) => report.policies.find((p) => p.policy === name)!;

  it("runs every policy to completion", () => {
    for (const p of report.policies) {
      expect(p.completed, p.policy).toBe(128);
      expect(
        Object.values(p.reasons).reduce((a, b) => a + b, 0),
        p.policy,
      ).toBe(128);
    }
  });

  it("prefix_aware beats round_robin on hit rate and stays under the oracle", () => {
    const pa = by("prefix_aware");
    const rr = by("round_robin");
    expect(pa.hitRate).toBeGreaterThan(rr.hitRate + 0.1);
    expect(pa.hitRate).toBeLessThanOrEqual(report.oracle.hitRate + 1e-9);
    expect(pa.reasons.affinity).toBeGreaterThan(0);
  });

  it("is deterministic for a seed, randomised policies included", () => {
    for (const name of ["random", "prefix_aware", "dynamo"] as const) {
      const a = simulatePolicy(w, fleet, name, routerFactory(name, w.blockTokens), viewOf(name));
      const b = simulatePolicy(w, fleet, name, routerFactory(name, w.blockTokens), viewOf(name));
      expect({ ...a, wallMs: 0 }).toEqual({ ...b, wallMs: 0 });
    }
    const other = simulatePolicy(
      w,
      { ...fleet, seed: 4 },
      "random",
      routerFactory("random", w.blockTokens),
      viewOf("random"),
    );
    expect(other.requestShare).not.toEqual(by("random").requestShare);
  });

  it("parses policy lists strictly", () => {
    expect(parsePolicies("prefix_aware, sglang,prefix_aware")).toEqual(["prefix_aware", "sglang"]);
    expect(parsePolicies("all")).toEqual([...ALL_POLICIES]);
    expect(() => parsePolicies("fastest")).toThrow(/unknown policy "fastest"/);
  });
});
