/**
 * One oversized count must not empty its backend's affinity index (red-team.md, est-bound-2, left alone 1;
 * bench/results/est-bound-2/index-wipe.ts): a count the prompt bound cut (between L and 2·L, L the largest
 * KV) evicts past its keys only what the engine's own prompt count confirms, at settle; a real long prompt
 * still evicts what the engine's LRU does.
 */
import { describe, expect, it } from "vitest";
import { Router } from "./router";
import { seededRandom } from "./seeded-random";

const keys = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);

/** Two backends of `kv` tokens; 40 families of 2,000 tokens (125 blocks) routed and completed. */
function warmed(kv: number) {
  const random = seededRandom(5);
  const router = new Router(
    ["a", "b"].map((id) => ({ id, weight: 1, kvCacheTokens: kv })),
    { policy: "prefix_aware", blockTokens: 16 },
  );
  let t = 0;
  const ctx = (dt: number) => {
    t += dt;
    return { now: t, random };
  };
  const family = (f: number) => ({
    blocks: keys(10_000 * (f + 1), 125),
    promptTokens: 2000,
    outputTokens: 200,
  });
  for (let f = 0; f < 40; f++) {
    const r = router.route(family(f), ctx(100));
    router.complete(
      r.ticket,
      { ok: true, promptTokens: 2000, cachedTokens: 0, outputTokens: 200, ttftMs: 200 },
      ctx(100),
    );
  }
  const keyedOn = (id: string) => router.stats().backends.find((b) => b.id === id)!.indexBlocks;
  /**
   * Routes one request of 512 keyed blocks counted `counted`, of which the Worker could not vouch for
   * `unconfirmed` (RouteRequest.unconfirmedTokens); returns its backend and a completion.
   */
  const long = (counted: number, unconfirmed?: number) => {
    const r = router.route(
      {
        blocks: keys(9_000_000, 512),
        promptTokens: counted,
        outputTokens: 100,
        ...(unconfirmed !== undefined ? { unconfirmedTokens: unconfirmed } : {}),
      },
      ctx(100),
    );
    return {
      on: r.decision.backendId,
      done: (engineSays: number | undefined) =>
        router.complete(
          r.ticket,
          {
            ok: true,
            ...(engineSays !== undefined ? { promptTokens: engineSays } : {}),
            cachedTokens: 0,
            outputTokens: 100,
            ttftMs: 500,
          },
          ctx(1000),
        ),
    };
  };
  /** How many of the 40 families still expect their hit (each routed and completed again). */
  const kept = () => {
    let n = 0;
    for (let f = 0; f < 40; f++) {
      const r = router.route(family(f), ctx(100));
      if (r.decision.expectedCachedTokens > 0) n++;
      router.complete(
        r.ticket,
        { ok: true, promptTokens: 2000, cachedTokens: 2000, outputTokens: 200, ttftMs: 50 },
        ctx(100),
      );
    }
    return n;
  };
  return { keyedOn, long, kept };
}

describe("a count the prompt bound cut and the affinity index", () => {
  const L = 262_144;

  it("does not evict at route: ~1.5 MB of spaces counted 393,216 leaves every family's entries", () => {
    const w = warmed(L);
    const before = { a: w.keyedOn("a"), b: w.keyedOn("b") };
    const fake = w.long(393_216);
    const other = fake.on === "a" ? "b" : "a";
    // While it runs: its own 512 keys join its backend's index, nothing else leaves it.
    expect(w.keyedOn(fake.on)).toBe(before[fake.on as "a" | "b"] + 512);
    expect(w.keyedOn(other)).toBe(before[other]);
    fake.done(20_000);
    expect(w.kept()).toBe(40);
  });

  it("charges nothing past the keys when the engine reports no prompt count", () => {
    const w = warmed(L);
    w.long(393_216).done(undefined);
    expect(w.kept()).toBe(40);
  });

  it("still evicts, at settle, what a real prompt the estimate overcounted fills (engine: 262,000)", () => {
    const cut = warmed(L);
    cut.long(300_000).done(262_000);
    const honest = warmed(L);
    honest.long(262_144).done(262_000);
    const kept = cut.kept();
    // The same families lost as for the same prompt counted within L: the engine's LRU, not the estimate.
    expect(kept).toBe(honest.kept());
    expect(kept).toBeLessThan(30);
  });

  it("still evicts at route a real long prompt within L (Mooncake's 126k on 132,096-token engines)", () => {
    const w = warmed(132_096);
    const before = { a: w.keyedOn("a"), b: w.keyedOn("b") };
    const real = w.long(126_000);
    // Its 1,968 entries (64 tokens each) past its keys leave room for at most 96 others: the engine's LRU
    // gives those blocks to this prompt as it prefills.
    expect(w.keyedOn(real.on)).toBeLessThan(before[real.on as "a" | "b"]);
    real.done(126_000);
    expect(w.kept()).toBeLessThan(30);
  });
});

describe("a count within L the Worker could not vouch for (runs of one character past its keys)", () => {
  const L = 262_144;
  // ~1 MB of spaces past a window of 8,192 tokens: counted 260,000, of which the runs claim 251,800.
  const fake = { counted: 260_000, unconfirmed: 251_800 };

  it("does not evict at route for the runs, and keeps every family when the engine reports 20,000", () => {
    const w = warmed(L);
    const before = { a: w.keyedOn("a"), b: w.keyedOn("b") };
    const r = w.long(fake.counted, fake.unconfirmed);
    // While it runs: its own 512 keys join the index, and the ~8 entries of its prompt past the keys
    // that are not runs are set aside as any prompt's; nothing a family holds is evicted for the runs.
    expect(w.keyedOn(r.on)).toBe(before[r.on as "a" | "b"] + 512);
    r.done(20_000);
    expect(w.kept()).toBe(40);
  });

  it("charges what the engine confirms at settle: a real prompt of 262,000 evicts as one the Worker vouched for", () => {
    const runs = warmed(L);
    runs.long(fake.counted, fake.unconfirmed).done(262_000);
    const vouched = warmed(L);
    vouched.long(fake.counted).done(262_000);
    const kept = runs.kept();
    expect(kept).toBe(vouched.kept());
    expect(kept).toBeLessThan(30);
  });

  it("ignores a claim that is not a count within the prompt", () => {
    for (const bad of [Number.NaN, -5, 0]) {
      const w = warmed(L);
      const before = { a: w.keyedOn("a"), b: w.keyedOn("b") };
      const r = w.long(fake.counted, bad);
      expect(w.keyedOn(r.on)).toBeLessThan(before[r.on as "a" | "b"] + 512);
      r.done(20_000);
    }
    const w = warmed(L);
    w.long(fake.counted, 10_000_000).done(20_000);
    expect(w.kept()).toBe(40);
  });
});
