/**
 * Left alone (red-team.md, "The estimate bound's remaining holes"): a request counted between L and 2·L (L the
 * largest KV) is charged a whole engine, and its past-window entries fill its backend's affinity index, which
 * forgets every prefix no running request pins, even when the engine then reports a short prompt. Two backends
 * of 262,144 KV; 40 families of 2,000 tokens routed and completed; then one request of 512 keyed blocks counted
 * `counted` (the engine reporting `engineSays`), completed; then the 40 families again: how many expect a hit.
 * (index-wipe.txt was run on main before branch index-wipe; bench/results/index-wipe/index-wipe-after.ts runs
 * the same scenario with more cases after it.)
 * Run: npx tsx bench/results/est-bound-2/index-wipe.ts
 */
import { fileURLToPath } from "node:url";
import { Router } from "../../../src/routing/router";
import { seededRandom } from "../../../src/routing/seeded-random";

const keys = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);

/** The scenario above, one request counted `counted` (0: none) that the engine reports as `engineSays`. */
export function familiesKept(counted: number, engineSays: number | undefined): { on: string; kept: number } {
  const random = seededRandom(5);
  const router = new Router(
    ["a", "b"].map((id) => ({ id, weight: 1, kvCacheTokens: 262_144 })),
    { policy: "prefix_aware", blockTokens: 16 },
  );
  const fam = (f: number) => ({ blocks: keys(10_000 * (f + 1), 125), promptTokens: 2000, outputTokens: 200 });
  let t = 0;
  const ctx = (dt: number) => ({ now: (t += dt), random });
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
  return { on, kept };
}

/** Prints each case's line. */
export function printCases(cases: readonly (readonly [number, number | undefined])[]): void {
  for (const [counted, engineSays] of cases) {
    const { on, kept } = familiesKept(counted, engineSays);
    console.log(
      `counted ${counted} (engine: ${engineSays ?? "no count"}) on ${on}: ${kept} of 40 families still expect their hit`,
    );
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1])
  printCases([
    [0, undefined],
    [393_216, 20_000],
    [393_216, undefined],
    [262_144, 262_000],
  ]);
