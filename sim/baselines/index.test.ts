/**
 * One suite of invariants run against every baseline: only healthy backends,
 * a valid pick with a reason, deterministic for a seed, survives fleet
 * changes; plus the registry's error on an unknown name.
 */
import { describe, expect, it } from "vitest";
import type { BlockKey, FleetView, RouteRequest, RoutingPolicy } from "../../src/routing/types";
import { BASELINE_NAMES, createBaseline, isBaselineName } from "./index";
import { keys, seededRandom, testFleet } from "./test-fleet";

interface Trace {
  readonly picks: number[];
  readonly reasons: string[];
}

/** A small closed-loop run: 5 prefix groups, random completions, one backend unhealthy for a while. */
function drive(policy: RoutingPolicy, seed: number, steps = 300): Trace {
  const random = seededRandom(seed);
  const n = 4;
  const inflight = new Array<number>(n).fill(0);
  const cached: Set<BlockKey>[] = Array.from({ length: n }, () => new Set());
  const live: { req: RouteRequest; index: number }[] = [];
  const picks: number[] = [];
  const reasons: string[] = [];
  for (let step = 0; step < steps; step++) {
    const healthy = [true, !(step >= 100 && step < 150), true, true];
    const fleet: FleetView = testFleet({
      n,
      inflight: [...inflight],
      healthy,
      cached: cached.map((s) => [...s]),
      signals: inflight.map((q) => ({
        running: q,
        waiting: Math.max(0, q - 2),
        kvUsage: Math.min(1, q / 10),
      })),
    });
    const group = Math.floor(random() * 5);
    const req: RouteRequest = {
      blocks: [...keys(group + 1, 8), ...keys(1000 + step, 1 + Math.floor(random() * 4), 8)],
      promptTokens: 16 * 12 + 7,
    };
    const ctx = { now: step * 50, random };
    const pick = policy.pick(req, fleet, ctx);
    expect(Number.isInteger(pick.index)).toBe(true);
    expect(healthy[pick.index]).toBe(true);
    expect(["affinity", "ring", "spill", "fallback"]).toContain(pick.reason);
    policy.onRouted?.(req, pick.index, fleet, ctx);
    inflight[pick.index]!++;
    for (const b of req.blocks) cached[pick.index]!.add(b);
    live.push({ req, index: pick.index });
    picks.push(pick.index);
    reasons.push(pick.reason);
    while (live.length > 0 && random() < 0.45) {
      const done = live.splice(Math.floor(random() * live.length), 1)[0]!;
      inflight[done.index]!--;
      policy.onCompleted?.(done.req, done.index, { ok: true }, ctx);
    }
  }
  return { picks, reasons };
}

describe.each(BASELINE_NAMES)("baseline %s: common invariants", (name) => {
  it("picks only healthy backends and is deterministic for a seed", () => {
    const a = drive(createBaseline(name), 7);
    const b = drive(createBaseline(name), 7);
    expect(a).toEqual(b);
    // It spreads over the fleet rather than pinning one backend.
    expect(new Set(a.picks).size).toBeGreaterThan(1);
  });

  it("keeps working after backends change", () => {
    const policy = createBaseline(name);
    drive(policy, 3, 60);
    policy.onBackendsChanged?.([
      { id: "b0", weight: 1, kvCacheTokens: 16 * 1024 },
      { id: "b2", weight: 1, kvCacheTokens: 16 * 1024 },
    ]);
    const fleet = testFleet({ n: 2, cached: [[], []], signals: [{}, {}] });
    const pick = policy.pick({ blocks: keys(1, 8), promptTokens: 128 }, fleet, {
      now: 0,
      random: seededRandom(1),
    });
    expect([0, 1]).toContain(pick.index);
  });
});

describe("createBaseline", () => {
  it("names every baseline and rejects an unknown name clearly", () => {
    for (const name of BASELINE_NAMES) expect(createBaseline(name).name).toBe(name);
    expect(isBaselineName("llmd")).toBe(true);
    expect(isBaselineName("vllm")).toBe(false);
    expect(() => createBaseline("vllm" as "llmd")).toThrow(
      /unknown baseline "vllm": expected one of sglang, llmd/,
    );
  });

  it("passes options through", () => {
    expect(() => createBaseline("sagemaker", { concurrencyThreshold: 2000 })).toThrow(/1\.\.1024/);
  });
});
