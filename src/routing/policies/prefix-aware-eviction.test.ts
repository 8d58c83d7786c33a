import { describe, expect, it } from "vitest";
import { seededRandom } from "../seeded-random";
import type { BackendSpec, FleetView, RouteRequest } from "../types";
import { PrefixAwarePolicy } from "./prefix-aware";

const FLEET: BackendSpec[] = ["g0", "g1"].map((id) => ({ id, weight: 1, kvCacheTokens: 1_000_000 }));

/** Two idle backends, both indexes full, matching nothing of the request; `hot` has a tail being reused. */
function view(hot: number, free = [0, 0]): FleetView {
  return {
    backends: FLEET,
    healthy: [true, true],
    inflight: [0, 0],
    totalInflight: 0,
    blockTokens: 16,
    balanceFactor: 1.25,
    cap: () => 1,
    matchedBlocks: () => new Int32Array(2),
    freeCacheTokens: (i) => free[i]!,
    tailReuse: (i) => (i === hot ? 0.9 : 0),
  };
}

/** A 4,096-token prompt whose leading blocks nobody holds; `k` varies its ring key. */
function request(k: number): RouteRequest {
  const blocks = Array.from({ length: 256 }, (_, j) => 1_000_003 * (k + 1) + j);
  return { blocks, promptTokens: 4096 };
}

describe("prefix_aware eviction price", () => {
  it("a full backend whose evictions come back costs more than one whose tail is stale", () => {
    const ctx = { now: 0, random: seededRandom(1) };
    for (let k = 0; k < 8; k++) {
      const on = new PrefixAwarePolicy();
      for (const hot of [0, 1]) expect(on.pick(request(k), view(hot), ctx).index).toBe(1 - hot);
    }
    // Without the price the ring decides, whichever backend has the hot tail: for some key it is that one.
    let ringPickedHot = false;
    for (let k = 0; k < 8; k++) {
      const off = new PrefixAwarePolicy({ evictionPrice: false });
      for (const hot of [0, 1]) if (off.pick(request(k), view(hot), ctx).index === hot) ringPickedHot = true;
    }
    expect(ringPickedHot).toBe(true);
  });

  it("charges nothing while the request fits in the free cache the index sees", () => {
    const ctx = { now: 0, random: seededRandom(1) };
    for (let k = 0; k < 8; k++) {
      const on = new PrefixAwarePolicy();
      const off = new PrefixAwarePolicy({ evictionPrice: false });
      const roomy = view(0, [8192, 8192]);
      expect(on.pick(request(k), roomy, ctx).index).toBe(off.pick(request(k), roomy, ctx).index);
    }
  });
});
