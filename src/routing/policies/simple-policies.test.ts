import { describe, expect, it } from "vitest";
import { Router } from "../router";
import { seededRandom } from "../seeded-random";
import type { BackendSpec, RouteRequest } from "../types";

const ctx = { now: 0, random: seededRandom(4) };
const req = (blocks: number[], promptTokens = blocks.length * 16): RouteRequest => ({ blocks, promptTokens });

describe("round_robin", () => {
  it("interleaves by weight (smooth weighted round robin)", () => {
    const fleet: BackendSpec[] = [
      { id: "a", weight: 1, kvCacheTokens: 1600 },
      { id: "b", weight: 2, kvCacheTokens: 1600 },
    ];
    const router = new Router(fleet, { policy: "round_robin", balanceFactor: 100 });
    const seq = Array.from({ length: 6 }, (_, k) => router.route(req([k]), ctx).decision.backendId);
    expect(seq.join("")).toBe("babbab");
  });
});

describe("least_outstanding", () => {
  it("picks the backend with the fewest in flight per weight", () => {
    const fleet: BackendSpec[] = [
      { id: "a", weight: 1, kvCacheTokens: 1600 },
      { id: "b", weight: 3, kvCacheTokens: 1600 },
    ];
    const router = new Router(fleet, { policy: "least_outstanding" });
    const picks = Array.from({ length: 8 }, (_, k) => router.route(req([k]), ctx).decision.backendId);
    // In-flight ends 2:6 = weights 1:3.
    expect(picks.filter((p) => p === "a")).toHaveLength(2);
    expect(router.inflight("b")).toBe(6);
  });
});

describe("consistent_hash", () => {
  it("keys on the first 4 blocks: same lead, same home; the cap spills the overflow", () => {
    const fleet: BackendSpec[] = ["a", "b", "c", "d"].map((id) => ({ id, weight: 1, kvCacheTokens: 16_000 }));
    const router = new Router(fleet, { policy: "consistent_hash" });
    const lead = [11, 12, 13, 14];
    const first = router.route(req([...lead, 100]), ctx);
    expect(first.decision.reason).toBe("ring");
    router.complete(first.ticket, { ok: true }, ctx);
    const second = router.route(req([...lead, 200, 201]), ctx);
    expect(second.decision.backendId).toBe(first.decision.backendId);
    const reasons = [second.decision.reason];
    for (let k = 0; k < 10; k++) reasons.push(router.route(req([...lead, 300 + k]), ctx).decision.reason);
    expect(reasons).toContain("spill");
  });
});

describe("random", () => {
  it("draws from ctx.random only: the same seed gives the same picks", () => {
    const fleet: BackendSpec[] = ["a", "b", "c"].map((id) => ({ id, weight: 1, kvCacheTokens: 16_000 }));
    const run = () => {
      const router = new Router(fleet, { policy: "random", balanceFactor: 100 });
      const c = { now: 0, random: seededRandom(77) };
      return Array.from({ length: 30 }, (_, k) => router.route(req([k]), c).decision.backendId).join("");
    };
    expect(run()).toBe(run());
    expect(new Set(run()).size).toBe(3);
  });
});
