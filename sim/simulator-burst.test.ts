/**
 * On the burst workload the hit rate of every policy follows from where it
 * put each burst, the way vLLM's schedule makes it: the first request of a
 * burst on a backend computes the prefix, and every later one there reuses
 * it (its blocks were cached when that first request was scheduled). So a
 * burst pays its prefix once per backend it touches, and a policy that keeps
 * it on one backend pays it once, like the pooled oracle.
 */
import { describe, expect, it } from "vitest";
import { oracleHitRate } from "./oracle";
import { ALL_POLICIES, routerFactory, viewOf } from "./policies";
import { prepareWorkload } from "./prepare";
import { type RouterFactory, simulatePolicy } from "./simulator";
import { burst } from "./workloads/burst";

// 12 bursts of 16 on 4 backends, a burst every second: fresh prefixes, no eviction.
const w = prepareWorkload(burst({ rate: 16, seed: 5, groups: 12 }));
const fleet = { backends: 4, kvCacheTokens: 442_368, seed: 9 };
const PREFIX_BLOCKS = 4096 / 16;

/** The policy's router, recording the backend of every request. */
function recording(name: (typeof ALL_POLICIES)[number], to: number[]): RouterFactory {
  return (backends, signals) => {
    const inner = routerFactory(name, w.blockTokens)(backends, signals);
    return {
      ...inner,
      route(req, ctx) {
        const r = inner.route(req, ctx);
        to.push(backends.findIndex((b) => b.id === r.decision.backendId));
        return r;
      },
      complete: (t, o, c) => inner.complete(t, o, c),
      ...(inner.firstToken !== undefined ? { firstToken: (t, c) => inner.firstToken!(t, c) } : {}),
    };
  };
}

describe("burst: hit rates follow placement as vLLM's schedule makes them", () => {
  it.each(ALL_POLICIES)("%s pays each burst's prefix once per backend the burst touches", (name) => {
    const placed: number[] = [];
    const r = simulatePolicy(w, fleet, name, recording(name, placed), viewOf(name));
    const touched = new Map<string, Set<number>>();
    w.requests.forEach((req, i) => {
      const key = String(w.promptBlocks[i]![0]);
      if (!touched.has(key)) touched.set(key, new Set());
      touched.get(key)!.add(placed[i]!);
      expect(req.promptTokens).toBe(4096 + 128);
    });
    let backendsPerBurst = 0;
    for (const s of touched.values()) backendsPerBurst += s.size;
    const expected = (w.requests.length - backendsPerBurst) * PREFIX_BLOCKS * 16;
    expect(r.cachedTokens).toBe(expected);
  });

  it("the pooled oracle pays each prefix once", () => {
    const o = oracleHitRate(
      w.requests.map((r, i) => ({ blocks: w.promptBlocks[i]!, promptTokens: r.promptTokens })),
      4 * Math.floor(442_368 / 16),
      16,
    );
    expect(o.cachedTokens).toBe((w.requests.length - 12) * 4096);
  });
});
