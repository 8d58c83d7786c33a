/**
 * est-bound-2's index-wipe.ts (bench/results/est-bound-2/index-wipe.ts) on this branch, with two more cases:
 * a count the prompt bound cut that the engine confirms (300,000 counted, 262,000 by the engine), and the
 * hole left (red-team.md, branch index-wipe, left alone 1): a fake counted just under L (260,000), which the
 * bound does not cut. Two backends of 262,144 KV; 40 families of 2,000 tokens routed and completed; then one
 * request of 512 keyed blocks counted `counted` (the engine reporting `engineSays`), completed; then the 40
 * families again: how many expect a hit.
 * Run: npx tsx bench/results/index-wipe/index-wipe-after.ts
 */
import { Router } from "../../../src/routing/router";
import { seededRandom } from "../../../src/routing/seeded-random";

const keys = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);
for (const [counted, engineSays] of [
  [0, undefined],
  [393_216, 20_000],
  [393_216, undefined],
  [300_000, 262_000],
  [262_144, 262_000],
  [260_000, 20_000],
] as const) {
  const random = seededRandom(5);
  const router = new Router(
    ["a", "b"].map((id) => ({ id, weight: 1, kvCacheTokens: 262_144 })),
    { policy: "prefix_aware", blockTokens: 16 },
  );
  const fam = (f: number) => ({ blocks: keys(10_000 * (f + 1), 125), promptTokens: 2000, outputTokens: 200 });
  let t = 0;
  const ctx = (dt: number) => {
    t += dt;
    return { now: t, random };
  };
  for (let f = 0; f < 40; f++) {
    const r = router.route(fam(f), ctx(100));
    router.complete(r.ticket, { ok: true, promptTokens: 2000, cachedTokens: 0, outputTokens: 200, ttftMs: 200 }, ctx(100));
  }
  let on = "-";
  if (counted > 0) {
    const r = router.route({ blocks: keys(9_000_000, 512), promptTokens: counted, outputTokens: 100 }, ctx(100));
    on = r.decision.backendId;
    const says = engineSays !== undefined ? { promptTokens: engineSays } : {};
    router.complete(r.ticket, { ok: true, ...says, cachedTokens: 0, outputTokens: 100, ttftMs: 500 }, ctx(1000));
  }
  let kept = 0;
  for (let f = 0; f < 40; f++) {
    const r = router.route(fam(f), ctx(100));
    if (r.decision.expectedCachedTokens > 0) kept++;
    router.complete(r.ticket, { ok: true, promptTokens: 2000, cachedTokens: 2000, outputTokens: 200, ttftMs: 50 }, ctx(100));
  }
  console.log(`counted ${counted} (engine: ${engineSays ?? "no count"}) on ${on}: ${kept} of 40 families still expect their hit`);
}
