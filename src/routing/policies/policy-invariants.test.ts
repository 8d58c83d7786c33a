/**
 * One suite of invariants, run against every registered policy (like Hono's
 * common.case.test.ts): only healthy backends, never over the bound while a
 * healthy backend is under it, deterministic for a seed, weights honoured,
 * fail open when nothing is healthy. The bound is the request-count cap for
 * the load-blind policies and the work bound (../work-bound.ts) for
 * prefix_aware, each checked against a reference computed here; prefix_aware
 * also keeps the request cap for a request that reuses a prefix another of its
 * in-flight requests on the same backend reuses (../shared-prefixes.ts). With
 * engine readings (load around the router, taken by a lagged scrape that
 * sometimes fails) that cap counts the foreign requests each fresh reading
 * holds, per backend and in the fleet total: the harness checks it against the
 * readings as the policy held them at each decision, never the live truth.
 */
import { describe, expect, it } from "vitest";
import { blockKeysFromIds, chainSeed } from "../../prefix/block-keys";
import { createPolicy } from "../registry";
import { NoHealthyBackendError, Router, type RouteTicket } from "../router";
import { seededRandom } from "../seeded-random";
import { DEFAULT_SHARED_FLOOR } from "../shared-prefixes";
import {
  type BackendSpec,
  type EngineSignals,
  POLICY_NAMES,
  type PolicyName,
  type RouteRequest,
  type RoutingPolicy,
} from "../types";
import { DEFAULT_WORK_SLACK } from "../work-bound";
import { PrefixAwarePolicy } from "./prefix-aware";

const FLEET: BackendSpec[] = [
  { id: "a", weight: 1, kvCacheTokens: 16 * 4000 },
  { id: "b", weight: 2, kvCacheTokens: 16 * 8000 },
  { id: "c", weight: 1, kvCacheTokens: 16 * 4000 },
  { id: "d", weight: 3, kvCacheTokens: 16 * 12000 },
];

const seed = chainSeed("test-model");

/** Requests sharing one of `groups` system prompts (32 blocks), each with its own tail. */
function requestMaker(random: () => number, groups: number) {
  let serial = 1_000_000;
  return (): RouteRequest => {
    const g = Math.floor(random() * groups);
    const ids: number[] = [];
    for (let b = 0; b < 32; b++) ids.push(g * 1000 + b);
    const tail = 1 + Math.floor(random() * 20);
    for (let b = 0; b < tail; b++) ids.push(serial++);
    const outputTokens = Math.floor(random() * 512);
    return { blocks: blockKeysFromIds(ids, seed), promptTokens: ids.length * 16 + 7, outputTokens };
  };
}

/**
 * The bounded-load cap from its definition, cap_i = ⌈c · w_i / Σw_healthy · (T + 1)⌉
 * with c = 1.25 = 5/4, in exact integer arithmetic: a reference that shares
 * no code (and no floating-point rounding) with the Router's own.
 */
function referenceCap(weight: number, healthyWeight: number, totalInflight: number): number {
  const num = 5 * weight * (totalInflight + 1);
  const den = 4 * healthyWeight;
  return Math.floor((num + den - 1) / den);
}

/**
 * The work bound from its definition (work-bound.ts), with the test's own
 * ledger: backend i may hold at most c · w_i/Σw_healthy · (W + x) + s · K_i
 * tokens of work once it takes x, where work is uncached prompt + output, or
 * any one request while it holds none.
 */
function referenceWorkBound(b: BackendSpec, healthyWeight: number, total: number, x: number): number {
  return ((1.25 * b.weight) / healthyWeight) * (total + x) + DEFAULT_WORK_SLACK * b.kvCacheTokens;
}

type Bound = "requests" | "work";

/**
 * Load around the router, as a scrape reads it: every `everyMs` each backend's reading is retaken (our
 * in-flight there plus its foreign requests, split into running and waiting at random), except that a
 * scrape of a backend fails with probability 0.3 (the old reading ages) and one in ten readings lacks
 * ownInflight. `pinned` backends get a flood of foreign requests (up to twice our fleet total), the rest a
 * few. `maxAgeMs` must be the policy's engineSignalMaxAgeMs.
 */
interface ForeignTraffic {
  readonly everyMs: number;
  readonly maxAgeMs: number;
  readonly pinned: readonly string[];
  /**
   * KV use of the readings: 0.5 when absent; else drawn per reading (the same draws either way), nearly
   * full (0.99..1: queues blocked on memory, ../engine-memory.ts) when true, 0.5 when false.
   */
  readonly kvFull?: boolean;
}

/** Requests a reading holds beyond ours, from its definition (foreign-load.ts): 0 when stale or unusable. */
function referenceForeign(r: EngineSignals | undefined, now: number, maxAgeMs: number): number {
  if (r === undefined || r.ownInflight === undefined || now - r.sampledAt > maxAgeMs) return 0;
  return Math.max(0, r.running + r.waiting - r.ownInflight);
}

interface Trace {
  readonly picks: string[];
  readonly violations: string[];
  readonly counts: Map<string, number>;
  /** Decisions at which some healthy backend could not take even a fully cached request. */
  full: number;
  /** Shared-prefix placements whose cap was the floor F, not the bounded-load cap. */
  floorHeld: number;
  /** Shared-prefix placements on a backend whose fresh reading held foreign requests. */
  foreignHeld: number;
}

/** Random route/complete/health churn; checks the cap and health at every decision. */
function drive(
  policy: PolicyName | (() => RoutingPolicy),
  seedValue: number,
  steps: number,
  groups = 8,
  churnHealth = true,
  indexStride = 1,
  bound: Bound = policy === "prefix_aware" ? "work" : "requests",
  foreign?: ForeignTraffic,
): Trace {
  const random = seededRandom(seedValue);
  const readings = new Map<string, EngineSignals>();
  const router = new Router(FLEET, {
    policy: typeof policy === "string" ? createPolicy(policy) : policy(),
    indexStride,
    ...(foreign !== undefined ? { engineSignals: (i: number) => readings.get(FLEET[i]!.id) } : {}),
  });
  let nextScrape = 0;
  const noForeign = new Map(FLEET.map((b) => [b.id, 0]));
  const make = requestMaker(random, groups);
  const open: RouteTicket[] = [];
  const workOf = new Map<RouteTicket, number>();
  // Per backend: the key where each open request's match there ended → open requests (the test's own count).
  const reuseOf = new Map<RouteTicket, number>();
  const sharers = new Map(FLEET.map((b) => [b.id, new Map<number, number>()]));
  const held = new Map(FLEET.map((b) => [b.id, 0]));
  const healthy = new Map(FLEET.map((b) => [b.id, true]));
  const trace: Trace = {
    picks: [],
    violations: [],
    counts: new Map(),
    full: 0,
    floorHeld: 0,
    foreignHeld: 0,
  };
  let now = 0;
  for (let s = 0; s < steps; s++) {
    now += random() * 5;
    const ctx = { now, random };
    if (foreign !== undefined && now >= nextScrape) {
      for (const b of FLEET) {
        if (random() < 0.3) continue;
        const own = router.inflight(b.id);
        const extra = Math.floor(
          random() * (foreign.pinned.includes(b.id) ? 2 * router.totalInflight + 16 : 4),
        );
        const waiting = Math.floor(random() * (own + extra + 1));
        const u = foreign.kvFull === undefined ? 0 : random();
        const kvUsage = foreign.kvFull === true ? 1 - 0.01 * u : 0.5;
        const reading = { running: own + extra - waiting, waiting, kvUsage, sampledAt: now };
        readings.set(b.id, random() < 0.1 ? reading : { ...reading, ownInflight: own });
      }
      nextScrape = now + foreign.everyMs;
    }
    // f_b of each backend and their sum, from the readings the policy holds now (0 without any).
    const f =
      foreign === undefined
        ? noForeign
        : new Map(FLEET.map((b) => [b.id, referenceForeign(readings.get(b.id), now, foreign.maxAgeMs)]));
    const fleetForeign = [...f.values()].reduce((a, b) => a + b, 0);
    const r = random();
    if (churnHealth && r < 0.01) {
      const b = FLEET[Math.floor(random() * FLEET.length)]!;
      const up = [...healthy.values()].filter(Boolean).length;
      const next = !healthy.get(b.id) || up > 1 ? !healthy.get(b.id) : true;
      healthy.set(b.id, next);
      router.setHealthy(b.id, next);
    } else if (r < 0.55 || open.length === 0) {
      const total = router.totalInflight;
      const hw = FLEET.filter((b) => healthy.get(b.id)).reduce((x, b) => x + b.weight, 0);
      const caps = new Map(FLEET.map((b) => [b.id, referenceCap(b.weight, hw, total)]));
      // The shared-prefix cap counts foreign requests too: on the backend and in the fleet's total.
      const shareCaps = new Map(FLEET.map((b) => [b.id, referenceCap(b.weight, hw, total + fleetForeign)]));
      const someUnder = FLEET.some((b) => healthy.get(b.id) && router.inflight(b.id) < caps.get(b.id)!);
      const req = make();
      const output = req.outputTokens ?? 0;
      const work = FLEET.filter((b) => healthy.get(b.id)).reduce((x, b) => x + held.get(b.id)!, 0);
      const fits = (b: BackendSpec, x: number) =>
        held.get(b.id) === 0 || held.get(b.id)! + x <= referenceWorkBound(b, hw, work, x) * (1 + 1e-12);
      // x is smallest where the backend caches most; a backend that fits the whole prompt fits any match.
      // A backend holding, ours and foreign, less than its shared-prefix cap cannot be held back by it.
      const someFits = FLEET.some(
        (b) =>
          healthy.get(b.id) &&
          fits(b, req.promptTokens + output) &&
          router.inflight(b.id) + f.get(b.id)! < shareCaps.get(b.id)!,
      );
      if (FLEET.some((b) => healthy.get(b.id) && !fits(b, output))) trace.full++;
      const { decision, ticket } = router.route(req, ctx);
      const id = decision.backendId;
      const x = req.promptTokens - decision.expectedCachedTokens + output;
      if (!healthy.get(id)) trace.violations.push(`step ${s}: unhealthy ${id}`);
      if (bound === "requests" && someUnder && decision.inflightAtDecision >= caps.get(id)!)
        trace.violations.push(`step ${s}: ${id} at ${decision.inflightAtDecision} >= cap ${caps.get(id)}`);
      if (bound === "work") {
        const spec = FLEET.find((b) => b.id === id)!;
        if (decision.reason !== "fallback" && !fits(spec, x))
          trace.violations.push(`step ${s}: ${id} holds ${held.get(id)! + x} tokens of work, over its bound`);
        if (decision.reason === "fallback" && someFits)
          trace.violations.push(`step ${s}: fallback while a backend could take the whole prompt`);
        const matchedBlocks = decision.expectedCachedTokens / 16;
        const key = matchedBlocks > 0 ? req.blocks[matchedBlocks - 1]! : undefined;
        const shared = key !== undefined && (sharers.get(id)!.get(key) ?? 0) > 0;
        // The request cap on shared prefixes, for a request reusing a prefix another open request on the
        // same backend reuses: n_i + f_i < max(⌈c · w_i/Σw · (T + Φ + 1)⌉, F), f_i the foreign requests
        // of backend i's fresh reading and Φ their sum over the fleet (both 0 without readings).
        const shareCap = Math.max(shareCaps.get(id)!, DEFAULT_SHARED_FLOOR);
        const heldThere = decision.inflightAtDecision + f.get(id)!;
        if (shared && shareCap > shareCaps.get(id)!) trace.floorHeld++;
        if (shared && f.get(id)! > 0) trace.foreignHeld++;
        if (decision.reason !== "fallback" && shared && heldThere >= shareCap)
          trace.violations.push(`step ${s}: ${id} at ${heldThere} >= cap ${shareCap} on a shared prefix`);
        if (key !== undefined) {
          sharers.get(id)!.set(key, (sharers.get(id)!.get(key) ?? 0) + 1);
          reuseOf.set(ticket, key);
        }
      }
      held.set(id, held.get(id)! + x);
      workOf.set(ticket, x);
      trace.picks.push(`${id}:${decision.reason}:${decision.expectedCachedTokens}`);
      trace.counts.set(id, (trace.counts.get(id) ?? 0) + 1);
      open.push(ticket);
    } else {
      const k = Math.floor(random() * open.length);
      const ticket = open[k]!;
      open[k] = open[open.length - 1]!;
      open.pop();
      held.set(ticket.backendId, held.get(ticket.backendId)! - workOf.get(ticket)!);
      const key = reuseOf.get(ticket);
      if (key !== undefined) {
        const m = sharers.get(ticket.backendId)!;
        m.set(key, m.get(key)! - 1);
      }
      const ok = random() > 0.05;
      router.complete(ticket, { ok, cachedTokens: ticket.decision.expectedCachedTokens, ttftMs: 50 }, ctx);
    }
  }
  return trace;
}

describe.each(POLICY_NAMES)("policy %s: shared invariants", (name) => {
  it("never picks an unhealthy backend and never exceeds the bounded cap while one is under it", () => {
    for (const s of [1, 2, 3]) {
      const trace = drive(name, s, 4000);
      expect(trace.violations).toEqual([]);
      expect(trace.picks.length).toBeGreaterThan(1000);
    }
  });

  it("keeps health and cap invariants with a strided index (indexStride 4)", () => {
    expect(drive(name, 5, 3000, 8, true, 4).violations).toEqual([]);
  });

  it("is deterministic for a seed", () => {
    expect(drive(name, 42, 2000).picks).toEqual(drive(name, 42, 2000).picks);
  });

  it("honours weights (share within 5 points of weight share)", () => {
    // Distinct prompts, no churn: only the weights and the load can explain the shares.
    const trace = drive(name, 7, 30_000, 5000, false);
    const total = [...trace.counts.values()].reduce((a, b) => a + b, 0);
    const weights = FLEET.reduce((a, b) => a + b.weight, 0);
    for (const b of FLEET) {
      const share = (trace.counts.get(b.id) ?? 0) / total;
      expect(Math.abs(share - b.weight / weights), `${b.id} share ${share.toFixed(3)}`).toBeLessThan(0.05);
    }
  });

  it("fails open when every backend is out of rotation, and throws NoHealthyBackendError only for an empty pool", () => {
    const router = new Router(FLEET, { policy: name });
    for (const b of FLEET) router.setHealthy(b.id, false);
    const ctx = { now: 0, random: seededRandom(1) };
    const seen = new Set<string>();
    for (let k = 0; k < 40; k++)
      seen.add(router.route({ blocks: [k + 1, 2, 3], promptTokens: 48 }, ctx).decision.backendId);
    expect(seen.size).toBeGreaterThan(1);
    const empty = new Router([], { policy: name });
    expect(() => empty.route({ blocks: [], promptTokens: 1 }, ctx)).toThrow(NoHealthyBackendError);
  });

  it("reports the index's expected cached tokens for the backend it picked, on every repeat", () => {
    // Block resolution (stride 1): 6 blocks of 16 = 96 tokens; the default stride is covered in router.test.ts.
    // A backend that was sent the request before holds all of it, any other none: whichever backend a
    // policy picks (least_outstanding and random move around), the decision must say which case it is.
    const router = new Router(FLEET, { policy: name, indexStride: 1 });
    const ctx = { now: 0, random: seededRandom(3) };
    const req: RouteRequest = { blocks: blockKeysFromIds([1, 2, 3, 4, 5, 6], seed), promptTokens: 100 };
    const holders = new Set<string>();
    let repeatsOnHolder = 0;
    for (let k = 0; k < 21; k++) {
      const { decision, ticket } = router.route(req, ctx);
      const holds = holders.has(decision.backendId);
      expect(decision.expectedCachedTokens, `repeat ${k} on ${decision.backendId}`).toBe(holds ? 96 : 0);
      if (holds) repeatsOnHolder++;
      holders.add(decision.backendId);
      router.complete(ticket, { ok: true, ttftMs: 10 }, ctx);
    }
    // With four backends, 21 sends reach one that holds the request many times over.
    expect(repeatsOnHolder).toBeGreaterThanOrEqual(17);
  });
});

describe("the invariant harness", () => {
  it("catches a policy that ignores the cap", () => {
    const greedy: () => RoutingPolicy = () => ({
      name: "greedy",
      pick: (_req, fleet) => ({ index: fleet.healthy.indexOf(true), reason: "ring" }),
    });
    expect(drive(greedy, 1, 2000).violations.length).toBeGreaterThan(0);
  });

  it("catches a policy that ignores the work bound", () => {
    const greedy: () => RoutingPolicy = () => ({
      name: "greedy",
      pick: (_req, fleet) => ({ index: fleet.healthy.indexOf(true), reason: "ring" }),
    });
    expect(drive(greedy, 1, 2000, 8, true, 1, "work").violations.length).toBeGreaterThan(0);
  });

  it("catches prefix_aware without its request cap on shared prefixes, and only that", () => {
    class IgnoresShareCap extends PrefixAwarePolicy {
      protected override overShareCap(): boolean {
        return false;
      }
    }
    const violations = drive(() => new IgnoresShareCap(), 1, 4000, 8, true, 1, "work").violations;
    expect(violations.filter((v) => v.endsWith("on a shared prefix")).length).toBeGreaterThan(0);
    expect(violations.filter((v) => !v.endsWith("on a shared prefix"))).toEqual([]);
  });

  it("prefix_aware keeps the shared-prefix cap counting the foreign requests engines report", () => {
    const traffic: ForeignTraffic = { everyMs: 250, maxAgeMs: 600, pinned: ["a", "c"] };
    const policy = () => new PrefixAwarePolicy({ engineSignalMaxAgeMs: traffic.maxAgeMs });
    for (const [s, groups] of [
      [1, 8],
      [2, 8],
      [3, 8],
      [1, 1],
      [2, 1],
      [5, 1],
    ] as const) {
      const trace = drive(policy, s, 4000, groups, true, 1, "work", traffic);
      expect(trace.violations, `seed ${s}, ${groups} prompts`).toEqual([]);
      expect(trace.foreignHeld).toBeGreaterThan(100);
    }
  });

  it("prefix_aware keeps every bound with lagged, failing readings of queues blocked on memory", () => {
    // Our traffic alone (no foreign requests beyond a few), engines nearly full and with requests waiting:
    // the head-of-line wait moves decisions (the picks differ from the same draws at half KV use), never
    // past a bound.
    const run = (kvFull: boolean, s: number) =>
      drive(() => new PrefixAwarePolicy({ engineSignalMaxAgeMs: 600 }), s, 4000, 8, true, 1, "work", {
        everyMs: 250,
        maxAgeMs: 600,
        pinned: [],
        kvFull,
      });
    for (const s of [1, 2, 3]) {
      const full = run(true, s);
      expect(full.violations, `seed ${s}`).toEqual([]);
      expect(full.picks).not.toEqual(run(false, s).picks);
    }
  });

  it("catches prefix_aware's old shared-prefix cap (our requests only) when engines report foreign ones", () => {
    class CountsOursOnly extends PrefixAwarePolicy {
      protected override foreignRequests(): number {
        return 0;
      }
    }
    const traffic: ForeignTraffic = { everyMs: 250, maxAgeMs: 600, pinned: ["a", "c"] };
    const policy = () => new CountsOursOnly({ engineSignalMaxAgeMs: traffic.maxAgeMs });
    // One hot system prompt: every backend's share cap binds in turn, and the old cap let a flooded
    // backend, holding few of ours, take the overflow.
    const violations = [1, 2, 3, 4, 5, 6].flatMap(
      (s) => drive(policy, s, 4000, 1, true, 1, "work", traffic).violations,
    );
    expect(violations.filter((v) => v.endsWith("on a shared prefix")).length).toBeGreaterThan(0);
    expect(violations.filter((v) => !v.endsWith("on a shared prefix"))).toEqual([]);
    // Without readings the two are one policy: the same decisions.
    expect(drive(() => new CountsOursOnly(), 4, 3000).picks).toEqual(drive("prefix_aware", 4, 3000).picks);
  });

  it("prefix_aware's work bound binds in this harness (the invariant is not vacuous)", () => {
    const trace = drive("prefix_aware", 1, 4000);
    expect(trace.full).toBeGreaterThan(100);
    // And the shared-prefix cap's floor is reached: some shared placements had F, not the cap, as bound.
    expect(trace.floorHeld).toBeGreaterThan(0);
  });
});
