/**
 * Test helpers: a hand-built FleetView and a seeded random source, so the
 * baselines' tests state every input they depend on.
 */

import type { BackendSpec, BlockKey, EngineSignals, FleetView, RouteRequest } from "../../src/routing/types";

/** The routing core's seeded [0,1) source (mulberry32), re-exported for the tests. */
export { seededRandom } from "../../src/routing/seeded-random";

export interface TestFleetSpec {
  readonly n: number;
  readonly inflight?: readonly number[];
  readonly healthy?: readonly boolean[];
  readonly weights?: readonly number[];
  readonly kvCacheTokens?: number;
  readonly blockTokens?: number;
  /** Per-backend engine signals; omit to build a fleet without them (the Worker's view). */
  readonly signals?: readonly Partial<EngineSignals>[];
  /** Exact cached-prefix contents per backend, for cachedPrefixBlocks. */
  readonly cached?: readonly (readonly BlockKey[])[];
}

export function testFleet(spec: TestFleetSpec): FleetView {
  const n = spec.n;
  const backends: BackendSpec[] = Array.from({ length: n }, (_, i) => ({
    id: `b${i}`,
    weight: spec.weights?.[i] ?? 1,
    kvCacheTokens: spec.kvCacheTokens ?? 16 * 1024,
  }));
  const inflight = spec.inflight ?? new Array<number>(n).fill(0);
  const healthy = spec.healthy ?? new Array<boolean>(n).fill(true);
  const totalInflight = inflight.reduce((a, b) => a + b, 0);
  const cachedSets = spec.cached?.map((keys) => new Set(keys));
  const withSignals = spec.signals !== undefined || spec.cached !== undefined;
  return {
    backends,
    healthy,
    inflight,
    totalInflight,
    blockTokens: spec.blockTokens ?? 16,
    balanceFactor: 1.25,
    cap(i: number): number {
      let sum = 0;
      for (let j = 0; j < n; j++) if (healthy[j]) sum += backends[j]!.weight;
      return Math.ceil((1.25 * backends[i]!.weight * (totalInflight + 1)) / sum);
    },
    matchedBlocks(): Int32Array {
      return new Int32Array(n);
    },
    engineSignals: withSignals
      ? (i: number): EngineSignals => {
          const s = spec.signals?.[i] ?? {};
          const set = cachedSets?.[i];
          return {
            running: s.running ?? 0,
            waiting: s.waiting ?? 0,
            kvUsage: s.kvUsage ?? 0,
            sampledAt: s.sampledAt ?? 0,
            cachedPrefixBlocks: (blocks) => {
              if (set === undefined) return 0;
              let m = 0;
              while (m < blocks.length && set.has(blocks[m]!)) m++;
              return m;
            },
          };
        }
      : undefined,
  };
}

/** A request whose blocks are `prefix` keys followed by `unique` fresh keys; 16 tokens per block. */
export function testRequest(blocks: readonly BlockKey[], blockTokens = 16, extraTokens = 0): RouteRequest {
  return { blocks, promptTokens: blocks.length * blockTokens + extraTokens };
}

/** Chained-looking keys for tests: group g, position p (distinct per group and position). */
export function keys(group: number, count: number, from = 0): BlockKey[] {
  return Array.from({ length: count }, (_, p) => group * 1_000_000 + from + p);
}
