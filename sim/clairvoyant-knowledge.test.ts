import { describe, expect, it } from "vitest";
import type { BackendSpec, RouteOutcome, RouteRequest } from "../src/routing/types";
import { CLAIRVOYANT_VIEW, clairvoyantFactory } from "./clairvoyant";
import { type Knowledge, knowledge, maxTokensBeliefs } from "./clairvoyant-knowledge";
import { TIGHT_ENGINE } from "./fixtures/tight-engine";
import { engineFlags } from "./flags";
import { EngineModel } from "./model/engine-model";
import { ENGINE_PRESETS, enginePreset } from "./model/presets";
import type { EngineConfig, EngineEvent, EngineRequest } from "./model/types";
import type { PreparedWorkload } from "./prepare";
import { prepareWorkload } from "./prepare";
import { engineConfig, type FleetReadings, simulatePolicy } from "./simulator";
import { generatedSharedPrefix } from "./workloads/shared-prefix";

/**
 * TIGHT_ENGINE under KV "reserve" (prompt + output held from admission): for the tests below that are about
 * a believed output length moving a reservation, and so admission. Under the default, vLLM V1's
 * step-by-step allocation, a belief moves finish times only (engine-model.ts reviseOutputs).
 */
const TIGHT_RESERVE: EngineConfig = { ...TIGHT_ENGINE, kvAllocation: "reserve" };

/** The same with memory to spare: admission never waits for blocks. */
const ROOMY: EngineConfig = { ...TIGHT_ENGINE, kvCacheTokens: 4 * 4096, maxRunning: 8 };

/** A prompt of `n` full blocks keyed base, base+1, …, plus 2 loose tokens. */
function req(id: string, n: number, base: number, out: number): EngineRequest {
  const blocks = Array.from({ length: n }, (_, i) => base + i);
  return { id, blocks, promptTokens: n * 4 + 2, outputTokens: out };
}

function drain(e: EngineModel): EngineEvent[] {
  const out: EngineEvent[] = [];
  for (let t = e.nextEventTime(); Number.isFinite(t); t = e.nextEventTime()) out.push(...e.advance(t));
  return out;
}

/** Steps `e` through `k` boundaries; returns a time just after the last. */
function stepBoundaries(e: EngineModel, k: number): number {
  let now = 0;
  for (let i = 0; i < k; i++) {
    now = e.nextEventTime();
    e.advance(now);
  }
  return now + 0.5;
}

describe("EngineModel.reviseOutputs", () => {
  const trueOut: Record<string, number> = { a: 5, b: 20, c: 8, d: 12 };
  const fill = (e: EngineModel, outs: Record<string, number>) => {
    e.submit(req("a", 3, 100, outs.a!), 0);
    e.submit(req("b", 5, 200, outs.b!), 0);
    e.submit(req("c", 2, 300, outs.c!), 3);
    e.submit(req("d", 4, 400, outs.d!), 3);
  };

  it("true lengths leave the engine as it was", () => {
    const e = new EngineModel(TIGHT_ENGINE);
    fill(e, trueOut);
    const now = stepBoundaries(e, 4);
    const revised = new EngineModel(TIGHT_ENGINE).copyFrom(e).reviseOutputs((id) => trueOut[id]!);
    expect(drain(revised)).toEqual(drain(new EngineModel(TIGHT_ENGINE).copyFrom(e)));
    expect(now).toBeGreaterThan(0);
  });

  // Revised in a decode-only run (b, c, d; a has ended) whose planned end is c's true finish. Memory to
  // spare, so the reservation's size changes no admission before the revision.
  it.each([
    { why: "c ends sooner than planned: the run is cut", told: { a: 5, b: 10, c: 6, d: 12 }, order: "cbd" },
    { why: "c ends last: the finish order changes", told: { a: 5, b: 10, c: 20, d: 12 }, order: "bdc" },
  ])("a belief mid-run gives the engine that was told it at submission ($why)", ({ told, order }) => {
    const byBelief = new EngineModel(ROOMY);
    fill(byBelief, told);
    const real = new EngineModel(ROOMY);
    fill(real, trueOut);
    // Until now neither engine has reached a finish where they differ.
    const now = stepBoundaries(real, 5);
    expect(real.metrics(now)).toMatchObject({ running: 3, waiting: 0, requestsFinished: 1 });
    byBelief.metrics(now);
    const revised = new EngineModel(ROOMY).copyFrom(real).reviseOutputs((id) => told[id as "a"]);
    const want = drain(byBelief).filter((ev) => ev.time > now);
    expect(want.flatMap((ev) => (ev.kind === "done" ? [ev.id] : [])).join("")).toBe(order);
    expect(drain(revised)).toEqual(want);
  });

  it("the reservation follows the belief: grown from the free queue, clipped to what can ever fit", () => {
    const e = new EngineModel(TIGHT_RESERVE);
    e.submit(req("a", 3, 100, 2), 0); // 14 + 2 tokens: 4 blocks
    stepBoundaries(e, 1);
    const usage = (x: EngineModel) => x.metrics(1).kvUsage * 64;
    expect(usage(e)).toBe(4);
    const grown = new EngineModel(TIGHT_RESERVE).copyFrom(e).reviseOutputs(() => 50); // 64 tokens: 16 blocks
    expect(usage(grown)).toBe(16);
    const huge = new EngineModel(TIGHT_RESERVE).copyFrom(e).reviseOutputs(() => 1e9); // the whole cache at most
    expect(usage(huge)).toBe(64);
    expect(usage(e)).toBe(4); // the original is untouched
  });
});

/** A hand-made workload: request 0 is routed; the others are placed on engines by hand (ids "1", "2", …). */
function handWorkload(reqs: EngineRequest[]): PreparedWorkload {
  return {
    blockTokens: 4,
    promptBlocks: reqs.map((r) => r.blocks),
    requests: reqs.map((r) => ({ promptTokens: r.promptTokens, outputTokens: r.outputTokens })),
  } as unknown as PreparedWorkload;
}

const BACKENDS = [{ id: "b0" }, { id: "b1" }] as unknown as BackendSpec[];
const READINGS = { live: () => undefined, scraped: () => undefined } as unknown as FleetReadings;

function routeFirst(
  w: PreparedWorkload,
  engines: EngineModel[],
  knows: Knowledge,
  now: number,
  scrapeAt?: number,
) {
  const router = clairvoyantFactory(w, "ttft", undefined, undefined, knows)(BACKENDS, READINGS, engines);
  if (scrapeAt !== undefined) {
    for (const e of engines) e.metrics(scrapeAt);
    router.scraped?.({ now: scrapeAt, random: Math.random });
  }
  const d = router.route({ blocks: w.promptBlocks[0] } as RouteRequest, { now, random: Math.random });
  return d.decision.backendId;
}

describe("--knows max-tokens: output lengths as the clients sent max_tokens", () => {
  // Engine 0 holds a request that truly ends in 5 tokens but asked for 200; engine 1 one that asked for
  // and runs 180. The new request (13 blocks) fits beside engine 0's true reservation (12 blocks) at once,
  // beside neither request's believed one: exactly, engine 0; believing max_tokens, engine 1 (ends sooner).
  // Worked under KV "reserve": the beliefs move reservations, so admission (TIGHT_RESERVE above).
  const placed = [req("0", 10, 500, 10), req("1", 9, 100, 5), req("2", 9, 200, 180)];
  const w = handWorkload(placed);
  const outputs = [10, 200, 180];
  const fleet = () => {
    const engines = [new EngineModel(TIGHT_RESERVE), new EngineModel(TIGHT_RESERVE)];
    engines[0]!.submit(placed[1]!, 0);
    engines[1]!.submit(placed[2]!, 0);
    for (const e of engines) stepBoundaries(e, 2);
    return engines;
  };

  it("true lengths: the engine whose request truly ends soon", () => {
    expect(routeFirst(w, fleet(), {}, 100)).toBe("b0");
  });

  it("max_tokens: the engine whose request is believed to end sooner, though it truly runs long", () => {
    expect(routeFirst(w, fleet(), { outputs }, 100)).toBe("b1");
  });

  it("max_tokens + lagged: the beliefs are applied to what the scrape read", () => {
    expect(routeFirst(w, fleet(), { outputs, lagMs: 1000 }, 100, 50)).toBe("b1");
    expect(routeFirst(w, fleet(), { lagMs: 1000 }, 100, 50)).toBe("b0");
  });

  it("learned: believes the mean output completed so far, within max_tokens, not the true length", () => {
    const decide = (completedOutput?: number, prior = { priorSum: 0, priorCount: 0 }) => {
      const router = clairvoyantFactory(w, "ttft", undefined, undefined, { outputs, learned: prior })(
        BACKENDS,
        READINGS,
        fleet(),
      );
      const at = { now: 100, random: Math.random };
      if (completedOutput !== undefined)
        router.complete(undefined, { ok: true, outputTokens: completedOutput } as RouteOutcome, at);
      return router.route({ blocks: w.promptBlocks[0] } as RouteRequest, at).decision.backendId;
    };
    // The history alone (no completion in this run yet): its mean, 5 tokens.
    expect(decide(undefined, { priorSum: 50, priorCount: 10 })).toBe("b0");
    // History and this run's completions, one mean: (50 + 1950) / 11 ≈ 182.
    expect(decide(1950, { priorSum: 50, priorCount: 10 })).toBe("b1");
    // Engine 0's request (truly 5) is believed to run 190 (the mean seen), engine 1's 180: engine 1.
    expect(decide(190)).toBe("b1");
    // Short answers seen: both held requests believed to end within 5 tokens, the new one fits beside either: engine 0.
    expect(decide(5)).toBe("b0");
  });

  it("beliefs: max_tokens sent, else the context end, clipped to the KV cache", () => {
    const pw = {
      requests: [
        { promptTokens: 100, outputTokens: 7 },
        { promptTokens: 100, outputTokens: 7 },
        { promptTokens: 200, outputTokens: 7 },
      ],
      maxTokens: [512, undefined, undefined],
    } as unknown as PreparedWorkload;
    const ctx1000 = { ...TIGHT_ENGINE, maxModelLen: 1000 };
    expect(maxTokensBeliefs(pw, { ...ctx1000, kvCacheTokens: 4096 })).toEqual([512, 900, 800]);
    expect(maxTokensBeliefs(pw, ctx1000)).toEqual([156, 156, 56]);
    // A prompt with no room left in the context: vLLM refuses it, so it is an error, not a belief of 1.
    expect(() => maxTokensBeliefs(pw, { ...ctx1000, maxModelLen: 200 })).toThrow(
      /request 2: prompt 200 \+ output 1 = 201 tokens, past the engine's max_model_len 200/,
    );
  });

  // The path clairvoyant-main.ts takes: --preset NAME → engineFlags → engineConfig → knowledge. The context
  // end is the preset's own maxModelLen; the MoE preset is served with YaRN to 131,072 (presets.ts), which a
  // separate table keyed by preset name once gave as the native 40,960.
  it.each(Object.keys(ENGINE_PRESETS))("max-tokens: no max_tokens runs to %s's maxModelLen", (name) => {
    const preset = enginePreset(name);
    const fleet = { backends: 2, seed: 1, ...engineFlags(name, undefined) };
    const cfg = engineConfig(fleet, 16);
    expect(Number.isInteger(preset.maxModelLen)).toBe(true);
    expect(cfg.maxModelLen).toBe(preset.maxModelLen);
    const pw = {
      name: "hand",
      requests: [
        { promptTokens: 1000, outputTokens: 7 },
        { promptTokens: 1000, outputTokens: 7 },
      ],
      maxTokens: [512, undefined],
    } as unknown as PreparedWorkload;
    const knew = knowledge("max-tokens", pw, cfg);
    // Every preset's context fits its KV cache (presets.test.ts), so the context end is the belief.
    expect(knew.outputs).toEqual([512, preset.maxModelLen - 1000]);
    if (name === "qwen3-30b-a3b-h100-vllm") expect(knew.outputs![1]).toBe(131_072 - 1000);
  });
});

describe("--knows lagged: engine state as of the last scrape, plus its own placements", () => {
  it("does not see what reached an engine after the scrape, until the next one", () => {
    const w = handWorkload([req("0", 10, 500, 10)]);
    const engines = [new EngineModel(TIGHT_ENGINE), new EngineModel(TIGHT_ENGINE)];
    const router = clairvoyantFactory(w, "ttft", undefined, undefined, { lagMs: 1000 })(
      BACKENDS,
      READINGS,
      engines,
    );
    router.scraped?.({ now: 0, random: Math.random });
    // Another client's long prompt reaches engine 0 after the scrape.
    engines[0]!.submit(req("x", 40, 900, 50), 1);
    const exact = clairvoyantFactory(w, "ttft")(BACKENDS, READINGS, engines);
    const at = { now: 2, random: Math.random };
    expect(exact.route({ blocks: w.promptBlocks[0] } as RouteRequest, at).decision.backendId).toBe("b1");
    // Lagged: both engines look idle (a tie goes to the lower index).
    expect(router.route({ blocks: w.promptBlocks[0] } as RouteRequest, at).decision.backendId).toBe("b0");
  });

  it("with a second client on one engine, sees its requests only at scrapes: other decisions than exact's", () => {
    const w = prepareWorkload(generatedSharedPrefix({ rate: 40, seed: 3, groups: 8, promptsPerGroup: 8 }));
    const fleet = { backends: 4, kvCacheTokens: 60_000, seed: 7, secondClient: { share: 0.3, backends: 1 } };
    const run = (knows: Knowledge, scrapeMs?: number) => {
      const out: number[] = [];
      const r = simulatePolicy(
        w,
        scrapeMs === undefined ? fleet : { ...fleet, scrapeMs },
        "c",
        clairvoyantFactory(w, "ttft", (i, b) => out.push(i * 10 + b), undefined, knows),
        CLAIRVOYANT_VIEW,
      );
      return { out, r };
    };
    const exact = run({});
    const lagged = run({ lagMs: 1000 }, 1000);
    // Every request the router was given was matched, placed and completed (the second client's skipped).
    expect(exact.out.length).toBeLessThan(64);
    expect(exact.r.completed).toBe(exact.out.length);
    expect(lagged.out.length).toBe(exact.out.length);
    expect(lagged.out).not.toEqual(exact.out);
  });

  it("with a scrape before every arrival, and with the default interval, decides as the exact reference", () => {
    const w = prepareWorkload(generatedSharedPrefix({ rate: 40, seed: 3, groups: 8, promptsPerGroup: 8 }));
    const fleet = { backends: 4, kvCacheTokens: 60_000, seed: 7 };
    const decisions = (knows: Knowledge, scrapeMs?: number) => {
      const out: number[] = [];
      simulatePolicy(
        w,
        scrapeMs === undefined ? fleet : { ...fleet, scrapeMs },
        "c",
        clairvoyantFactory(w, "ttft", (_i, b) => out.push(b), undefined, knows),
        CLAIRVOYANT_VIEW,
      );
      return out;
    };
    const exact = decisions({});
    expect(new Set(exact).size).toBeGreaterThan(1);
    // A scrape every 1 ms reads the engines between nearly every two arrivals (40 req/s).
    expect(decisions({ lagMs: 1 }, 1)).toEqual(exact);
    // No other traffic: its own placements and completions replay the engines exactly between scrapes.
    expect(decisions({ lagMs: 1000 }, 1000)).toEqual(exact);
  });
});
