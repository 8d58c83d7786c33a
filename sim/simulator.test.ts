import { describe, expect, it } from "vitest";
import type { RouteReason } from "../src/routing/types";
import { prepareWorkload } from "./prepare";
import { GATEWAY_VIEW } from "./request-view";
import { fleetSpecs, type RouterFactory, type SimRouter, simulatePolicy } from "./simulator";
import { generatedSharedPrefix } from "./workloads/shared-prefix";

// A throwaway round-robin router for testing the event loop on its own; the
// real policies come from the routing core (see simulator-policies.test.ts).
function roundRobin(log?: { routed: number[]; completed: number[] }): RouterFactory {
  return (backends) => {
    let next = 0;
    let seq = 0;
    const router: SimRouter = {
      route() {
        const index = next++ % backends.length;
        const ticket = seq++;
        log?.routed.push(ticket);
        const reason: RouteReason = "ring";
        return {
          decision: {
            backendId: backends[index]!.id,
            reason,
            expectedCachedTokens: 0,
            availableCachedTokens: 0,
            inflightAtDecision: 0,
          },
          ticket,
        };
      },
      complete(ticket) {
        log?.completed.push(ticket as number);
      },
    };
    return router;
  };
}

const fleet = { backends: 4, kvCacheTokens: 200_000, seed: 7 };
const small = () =>
  prepareWorkload(generatedSharedPrefix({ rate: 20, seed: 3, groups: 8, promptsPerGroup: 8 }));

describe("simulatePolicy", () => {
  it("refuses a workload past the engine's max_model_len, naming the request (vLLM answers it 400)", () => {
    const w = small();
    const long = {
      ...w,
      requests: w.requests.map((r, i) => (i === 5 ? { ...r, outputTokens: 131_072 } : r)),
    };
    expect(() => simulatePolicy(long, fleet, "rr", roundRobin(), GATEWAY_VIEW)).toThrow(
      /generated-shared-prefix.*request 5: prompt \d+ \+ output 131072 = \d+ tokens, past the engine's max_model_len 131072/,
    );
    // The MoE preset's context, by name (served with YaRN to 131,072), is the limit it checks.
    const moe = { ...fleet, preset: "qwen3-30b-a3b-h100-vllm" };
    expect(() => simulatePolicy(long, moe, "rr", roundRobin(), GATEWAY_VIEW)).toThrow(/max_model_len 131072/);
    expect(simulatePolicy(w, moe, "rr", roundRobin(), GATEWAY_VIEW).completed).toBe(64);
  });

  it("completes every request exactly once and tells the router each completion", () => {
    const log = { routed: [] as number[], completed: [] as number[] };
    const r = simulatePolicy(small(), fleet, "rr", roundRobin(log), GATEWAY_VIEW);
    expect(r.completed).toBe(64);
    expect(log.routed).toHaveLength(64);
    expect([...log.completed].sort((a, b) => a - b)).toEqual(log.routed);
    expect(r.requestShare.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 10);
    expect(r.requestShare.every((s) => s === 0.25)).toBe(true);
    expect(r.reasons.ring).toBe(64);
  });

  it("routes over the fleet's own ids when it has them (the ring is keyed by ids)", () => {
    const ids = ["emu-1", "emu-2", "emu-3", "emu-4"];
    const third: RouterFactory = (backends, readings) => {
      const rr = roundRobin()(backends, readings);
      return {
        route(req, ctx) {
          const r = rr.route(req, ctx);
          return { ...r, decision: { ...r.decision, backendId: backends[2]!.id } };
        },
        complete: rr.complete,
      };
    };
    const r = simulatePolicy(small(), { ...fleet, ids }, "third", third, GATEWAY_VIEW);
    expect(r.completed).toBe(64);
    expect(r.requestShare).toEqual([0, 0, 1, 0]);
    expect(fleetSpecs({ ...fleet, ids }).map((b) => b.id)).toEqual(ids);
    expect(() => fleetSpecs({ ...fleet, ids: ["a", "b", "c"] })).toThrow(/4 distinct ids/);
    expect(() => fleetSpecs({ ...fleet, ids: ["a", "b", "c", "a"] })).toThrow(/4 distinct ids/);
  });

  it("is deterministic for a seed", () => {
    const a = simulatePolicy(small(), fleet, "rr", roundRobin(), GATEWAY_VIEW);
    const b = simulatePolicy(small(), fleet, "rr", roundRobin(), GATEWAY_VIEW);
    const strip = (x: typeof a) => ({ ...x, wallMs: 0 });
    expect(strip(a)).toEqual(strip(b));
  });

  it("reports plausible figures: TTFT ≤ E2E, hits only from repeated prefixes, balanced load", () => {
    const r = simulatePolicy(small(), fleet, "rr", roundRobin(), GATEWAY_VIEW);
    expect(r.ttftP50Ms).toBeGreaterThan(0);
    expect(r.ttftP99Ms).toBeLessThanOrEqual(r.e2eP99Ms);
    expect(r.ttftP50Ms).toBeLessThanOrEqual(r.ttftP90Ms);
    // 8 groups × 8 prompts over 4 backends: each group's first visit to each backend misses.
    expect(r.hitRate).toBeGreaterThan(0.3);
    expect(r.hitRate).toBeLessThan(2048 / 2176);
    expect(r.maxLoadRatio).toBeGreaterThanOrEqual(1);
    expect(r.maxLoadRatio).toBeLessThan(1.5);
    expect(r.prefillGpuSeconds).toBeGreaterThan(0);
    expect(r.outputTokensPerSec).toBeGreaterThan(0);
  });

  it("loads a weighted backend in proportion: maxLoadRatio is relative to the weight share", () => {
    // Round robin ignores weights: the weight-1 backends carry ~1/4 of the load where 1/6 is fair.
    const r = simulatePolicy(small(), { ...fleet, weights: [3, 1, 1, 1] }, "rr", roundRobin(), GATEWAY_VIEW);
    expect(r.inflightAvg).toHaveLength(4);
    expect(r.maxLoadRatio).toBeGreaterThan(1.25);
    expect(r.maxLoadRatio).toBeLessThan(1.8);
    expect(() =>
      simulatePolicy(small(), { ...fleet, weights: [1] }, "rr", roundRobin(), GATEWAY_VIEW),
    ).toThrow(/weights/);
  });
});
