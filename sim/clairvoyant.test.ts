import { describe, expect, it } from "vitest";
import { boundedCap } from "../src/routing/bounded-load";
import {
  aloneTtftMs,
  CLAIRVOYANT_VIEW,
  clairvoyantFactory,
  everSeenHits,
  placementCost,
} from "./clairvoyant";
import { TIGHT_ENGINE } from "./fixtures/tight-engine";
import { EngineModel } from "./model/engine-model";
import type { EngineEvent, EngineRequest } from "./model/types";
import { prepareWorkload } from "./prepare";
import { simulatePolicy } from "./simulator";
import { generatedSharedPrefix } from "./workloads/shared-prefix";

/** `shared` blocks keyed 0, 1, … then `own` blocks keyed base, base+1, …, and 2 loose tokens. */
function req(id: string, shared: number, own: number, base: number, out: number): EngineRequest {
  const blocks = [
    ...Array.from({ length: shared }, (_, i) => i),
    ...Array.from({ length: own }, (_, i) => base + i),
  ];
  return { id, blocks, promptTokens: blocks.length * 4 + 2, outputTokens: out };
}

/** Every event until the engine is idle. */
function drain(e: EngineModel): EngineEvent[] {
  const out: EngineEvent[] = [];
  for (let t = e.nextEventTime(); Number.isFinite(t); t = e.nextEventTime()) out.push(...e.advance(t));
  return out;
}

/** An engine mid-run: decoding, prefilling in chunks, queued, and with cached blocks of finished requests. */
function busyEngine(): { engine: EngineModel; now: number } {
  const e = new EngineModel(TIGHT_ENGINE);
  e.submit(req("a", 4, 2, 100, 3), 0);
  e.submit(req("b", 4, 8, 200, 40), 0);
  e.submit(req("c", 4, 10, 300, 30), 5);
  e.submit(req("d", 2, 12, 400, 20), 5);
  e.submit(req("e", 4, 3, 500, 10), 20);
  e.submit(req("f", 0, 14, 600, 25), 21);
  let now = 0;
  // Step through a few boundaries (a finishes, b and c prefill in chunks, the rest wait).
  for (let k = 0; k < 6; k++) {
    now = e.nextEventTime();
    e.advance(now);
  }
  return { engine: e, now: now + 0.5 };
}

describe("EngineModel.copyFrom", () => {
  it("a copy stepped forward gives the original's events, and leaves the original's own future intact", () => {
    const { engine, now } = busyEngine();
    const m = engine.metrics(now);
    // The state is the interesting one: something decoding or prefilling, and something waiting.
    expect(m.running).toBeGreaterThan(0);
    expect(m.waiting).toBeGreaterThan(0);
    const copy = new EngineModel(TIGHT_ENGINE).copyFrom(engine);
    const extra = req("x", 4, 5, 700, 6);
    // The copy runs first, to the end: had it shared any mutable state, the original would now differ.
    copy.submit(extra, now);
    const fromCopy = drain(copy);
    engine.submit(extra, now);
    const fromOriginal = drain(engine);
    expect(fromCopy.find((ev) => ev.id === "x" && ev.kind === "first_token")).toBeDefined();
    expect(fromCopy).toEqual(fromOriginal);
    expect(copy.metrics(1e9)).toEqual(engine.metrics(1e9));
  });

  it("a scratch engine copied over and over gives the same answer each time", () => {
    const { engine, now } = busyEngine();
    const scratch = new EngineModel(TIGHT_ENGINE);
    const extra = req("x", 4, 5, 700, 6);
    const first = placementCost(engine, scratch, extra, now, "ttft");
    // Dirty the scratch engine's pool and queue with another what-if, then ask again.
    placementCost(engine, scratch, req("y", 0, 30, 900, 50), now, "total");
    expect(placementCost(engine, scratch, extra, now, "ttft")).toBe(first);
    // And the original is untouched: its own run to the end gives that first token.
    engine.submit(extra, now);
    const t = drain(engine).find((ev) => ev.id === "x" && ev.kind === "first_token")!.time;
    expect(t - now).toBe(first);
  });

  it("refuses an engine of another config", () => {
    expect(() =>
      new EngineModel({ ...TIGHT_ENGINE, maxRunning: 4 }).copyFrom(new EngineModel(TIGHT_ENGINE)),
    ).toThrow(/configs differ/);
  });
});

describe("placementCost", () => {
  it("total = own TTFT + the delay added to the first tokens of the requests ahead", () => {
    const { engine, now } = busyEngine();
    const scratch = new EngineModel(TIGHT_ENGINE);
    const extra = req("x", 0, 12, 800, 4);
    const own = placementCost(engine, scratch, extra, now, "ttft");
    const total = placementCost(engine, scratch, extra, now, "total");
    expect(total).toBeGreaterThanOrEqual(own);
    // By hand: those ahead, with and without x.
    const base = new EngineModel(TIGHT_ENGINE).copyFrom(engine);
    const withX = new EngineModel(TIGHT_ENGINE).copyFrom(engine);
    withX.submit(extra, now);
    const firsts = (evs: EngineEvent[]) =>
      new Map(evs.filter((ev) => ev.kind === "first_token").map((ev) => [ev.id, ev.time]));
    const a = firsts(drain(base));
    const b = firsts(drain(withX));
    let added = 0;
    for (const [id, t] of a) added += b.get(id)! - t;
    expect(total).toBeCloseTo(b.get("x")! - now + added, 9);
  });
});

describe("the clairvoyant reference in the simulator", () => {
  const w = prepareWorkload(generatedSharedPrefix({ rate: 40, seed: 3, groups: 8, promptsPerGroup: 8 }));
  const fleet = { backends: 4, kvCacheTokens: 60_000, seed: 7 };

  it("predicts each request's TTFT as a floor: later arrivals can only add to it", () => {
    const predicted = new Map<number, number>();
    const actual = new Map<number, number>();
    const r = simulatePolicy(
      w,
      fleet,
      "clairvoyant_ttft",
      clairvoyantFactory(w, "ttft", (i, _b, cost) => predicted.set(i, cost)),
      CLAIRVOYANT_VIEW,
      undefined,
      { done: (i, _b, _c, ttft) => actual.set(i, ttft) },
    );
    expect(r.completed).toBe(64);
    expect(predicted.size).toBe(64);
    let exact = 0;
    for (const [i, p] of predicted) {
      expect(actual.get(i)!).toBeGreaterThanOrEqual(p - 1e-6);
      if (Math.abs(actual.get(i)! - p) < 1e-6) exact++;
    }
    // Most requests meet no later arrival before their first token on this light load.
    expect(exact).toBeGreaterThan(32);
  });

  it("with a balance factor, never places a request on an engine at its bounded-load cap", () => {
    const zipfy = prepareWorkload(
      generatedSharedPrefix({ rate: 80, seed: 4, groups: 2, promptsPerGroup: 32 }),
    );
    const seen: number[] = [];
    const observer = {
      routed(_i: number, _b: number, d: { inflightAtDecision: number }, engines: readonly EngineModel[]) {
        const held = engines.map((e) => e.metrics(0).running + e.metrics(0).waiting);
        const total = held.reduce((a, x) => a + x, 0);
        expect(d.inflightAtDecision).toBeLessThan(boundedCap(1, engines.length, total, 1.25));
        seen.push(d.inflightAtDecision);
      },
    };
    const capped = simulatePolicy(
      zipfy,
      fleet,
      "capped",
      clairvoyantFactory(zipfy, "ttft", undefined, 1.25),
      CLAIRVOYANT_VIEW,
      undefined,
      observer,
    );
    const free = simulatePolicy(zipfy, fleet, "free", clairvoyantFactory(zipfy, "ttft"), CLAIRVOYANT_VIEW);
    expect(seen).toHaveLength(64);
    // Two hot prefixes on four engines: uncapped, it keeps them home; the cap spreads them.
    expect(capped.maxLoadRatio).toBeLessThan(free.maxLoadRatio);
  });

  it("is deterministic", () => {
    const a = simulatePolicy(w, fleet, "c", clairvoyantFactory(w, "total"), CLAIRVOYANT_VIEW);
    const b = simulatePolicy(w, fleet, "c", clairvoyantFactory(w, "total"), CLAIRVOYANT_VIEW);
    expect({ ...a, wallMs: 0 }).toEqual({ ...b, wallMs: 0 });
  });
});

describe("aloneTtftMs", () => {
  it("is the prefill of the uncached part only, and a hit makes it shorter", () => {
    const pristine = new EngineModel(TIGHT_ENGINE);
    const scratch = new EngineModel(TIGHT_ENGINE);
    const r = req("x", 0, 12, 800, 4); // 50 tokens: steps of 16 tokens at 1 token/ms, plus one decode each
    const cold = aloneTtftMs(pristine, scratch, r, 0);
    const warm = aloneTtftMs(pristine, scratch, r, 8); // 8 blocks = 32 tokens cached
    expect(warm).toBeLessThan(cold);
    // The same as running it by hand on a fresh engine.
    const e = new EngineModel(TIGHT_ENGINE);
    e.submit(r, 0);
    expect(drain(e).find((ev) => ev.kind === "first_token")!.time).toBe(cold);
    expect(aloneTtftMs(pristine, scratch, r, 0)).toBe(cold);
  });
});

describe("everSeenHits", () => {
  it("is each prompt's longest leading run of blocks some earlier prompt had", () => {
    expect(everSeenHits([[1, 2, 3], [1, 2, 4], [5], [1, 2, 4, 6], [7, 1]])).toEqual([0, 2, 0, 3, 0]);
  });
});
