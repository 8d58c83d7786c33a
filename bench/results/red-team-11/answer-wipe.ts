/**
 * What one short request whose engine reports an impossible `completion_tokens` does to its backend's
 * affinity index (red-team-11). Two 262,144-token backends, 40 families of 2,000 tokens warmed; then one
 * 64-token request reported at `bogus` output tokens; then how many families still expect their hit.
 * Run: npx tsx bench/results/red-team-11/answer-wipe.ts
 */
import { Router } from "../../../src/routing/router";
import { seededRandom } from "../../../src/routing/seeded-random";

const keys = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);
for (const bogus of [200, 262_144, 2 ** 29]) {
  const random = seededRandom(5);
  const router = new Router(
    ["a", "b"].map((id) => ({ id, weight: 1, kvCacheTokens: 262_144 })),
    { policy: "prefix_aware", blockTokens: 16 },
  );
  let t = 0;
  const ctx = (dt: number) => {
    t += dt;
    return { now: t, random };
  };
  const family = (f: number) => ({ blocks: keys(10_000 * (f + 1), 125), promptTokens: 2000 });
  for (let f = 0; f < 40; f++) {
    const r = router.route(family(f), ctx(100));
    router.complete(r.ticket, { ok: true, promptTokens: 2000, cachedTokens: 0, outputTokens: 200, ttftMs: 200 }, ctx(100));
  }
  const index = () => router.stats().backends.map((b) => b.indexBlocks);
  const before = index();
  const r = router.route({ blocks: keys(9_000_000, 4), promptTokens: 64, outputTokens: 8 }, ctx(100));
  router.complete(r.ticket, { ok: true, promptTokens: 64, cachedTokens: 0, outputTokens: bogus, ttftMs: 50 }, ctx(100));
  const after = index();
  let kept = 0;
  for (let f = 0; f < 40; f++) {
    const q = router.route(family(f), ctx(100));
    if (q.decision.expectedCachedTokens > 0) kept++;
    router.complete(q.ticket, { ok: true, promptTokens: 2000, cachedTokens: 2000, outputTokens: 200, ttftMs: 50 }, ctx(100));
  }
  console.log(`completion_tokens ${bogus}: on ${r.decision.backendId}, index blocks ${before} -> ${after}, families keeping their hit ${kept} of 40`);
}
