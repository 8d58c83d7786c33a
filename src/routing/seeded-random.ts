/**
 * A seeded [0, 1) source for RouteContext.random in tests, the simulator and
 * benchmarks (the DO passes Math.random). Mulberry32 (Tommy Ettinger, public
 * domain): 32 bits of state, fast, good enough for load-balancing tie-breaks.
 */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
