import { describe, expect, it } from "vitest";
import { blockKeysFromIds, chainSeed } from "../prefix/block-keys";
import { holdBack } from "./admission-view";
import { Router } from "./router";
import { seededRandom } from "./seeded-random";
import type { BackendSpec, RouteRequest } from "./types";

describe("holdBack", () => {
  const INF = Number.POSITIVE_INFINITY;
  it("holds back the candidates that wait for memory when another admits the request now", () => {
    const costs = Float64Array.of(0, 0, INF, 0);
    expect(holdBack(costs, Float64Array.of(4_000, 0, 9_000, 250))).toBe(2);
    expect([...costs]).toEqual([INF, 0, INF, INF]);
  });

  it("holds back nothing when every candidate waits for memory (or none does)", () => {
    const all = Float64Array.of(0, 0, INF);
    expect(holdBack(all, Float64Array.of(4_000, 100, 0))).toBe(0);
    expect([...all]).toEqual([0, 0, INF]);
    const none = Float64Array.of(0, 0);
    expect(holdBack(none, Float64Array.of(0, 0))).toBe(0);
    expect([...none]).toEqual([0, 0]);
  });
});

describe("prefix_aware with the admission view", () => {
  const FLEET: BackendSpec[] = ["g0", "g1"].map((id) => ({ id, weight: 1, kvCacheTokens: 120_000 }));
  const SEED = chainSeed("m", "tenant-a");
  const prompt = (id: number, promptTokens: number): RouteRequest => ({
    blocks: blockKeysFromIds([id * 10, id * 10 + 1, id * 10 + 2, id * 10 + 3], SEED),
    promptTokens,
  });

  it("places a prompt that would wait for memory where it fits, though it starts later there", () => {
    const router = new Router(FLEET, { policy: "prefix_aware" });
    const random = seededRandom(1);
    const ctx = (now: number) => ({ now, random });
    // Ten short requests 100 ms apart, each decoding ~5 s: both backends learn their decode time.
    const seen = new Set<string>();
    for (let k = 0; k < 10; k++) {
      const { decision, ticket } = router.route(prompt(k + 1, 200), ctx(k * 100));
      seen.add(decision.backendId);
      router.complete(ticket, { ok: true, cachedTokens: 0, ttftMs: 50 }, ctx(k * 100 + 5_000));
    }
    expect(seen.size, "both backends learned a decode time").toBe(2);
    // An 80k-token prompt on an idle fleet: 8 s of prefill at the default 10,000 tok/s, then ~5 s of decode.
    const l1 = router.route(prompt(100, 80_000), ctx(6_000));
    const a = l1.decision.backendId;
    // A 45k-token prompt 8.9 s later: on A it would wait for L1's memory, so it goes to B (4.5 s queued).
    const l2 = router.route(prompt(101, 45_000), ctx(14_900));
    expect(l2.decision.backendId, "L2 avoids the full engine").not.toBe(a);
    // A 60k-token prompt at 15 s: on A nothing is queued, but it waits ~4 s for L1's KV (80k + 60k > 120k)
    // and ~6 s to prefill; on B it fits (45k + 60k) and waits 4.4 s behind L2. Its own first token is
    // ~0.3 s sooner on A, but there the FCFS queue would be blocked for ~4 s behind it, and B admits it
    // now (the admission view): it goes to B.
    const l3 = router.route(prompt(102, 60_000), ctx(15_000));
    expect(l3.decision.backendId).toBe(l2.decision.backendId);
  });
});
