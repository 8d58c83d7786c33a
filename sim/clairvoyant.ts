/**
 * A clairvoyant greedy reference router, for the simulator only: never a
 * product policy, never in the peers' race (sim/policies.ts does not know it).
 * It answers one question (issue #12): on a run where every router reaches
 * about the oracle's hit rate, how much TTFT p99 could a better decision per
 * request still win?
 *
 * At each arrival it reads every engine's exact state (queue, running batch,
 * run in progress, KV cache contents, every request's true output length:
 * EngineModel.copyFrom), and for each candidate engine steps a copy of it,
 * with the request added, until the request's first token. Arrivals after
 * this one are unknown to it: it is greedy. Two objectives:
 * - `ttft`: the request's own TTFT, smallest wins;
 * - `total`: its own TTFT plus the delay it adds to the first tokens of the
 *   requests the engine holds that have not had theirs yet (its cost to
 *   others, as far as they are known at the decision). Under the engine's
 *   FCFS admission those are all ahead of it, so what it can add to them is
 *   a longer shared step, no more; decodes it slows are not counted (TTFT
 *   is the figure here).
 * Equal costs (within 1 ns) go to the engine holding fewer requests, then to
 * the lower index. With `balanceFactor` c it chooses only among engines under
 * the bounded-load cap in requests (bounded-load.ts boundedCap: at most
 * ceil(c / n · (requests in the fleet + 1)) each), the bound issue #12's
 * maxLoadRatio ≤ 1.3 asks of us; without it, it goes wherever TTFT is least,
 * however crowded (the peers' llm-d does the same on Zipf: maxLoadRatio 3–6).
 *
 * A reference, not an upper bound: a greedy clairvoyant ignores later
 * arrivals (taking a cached home now may queue the next ten requests of the
 * same prefix behind a long prefill), so a router that plans ahead can beat it.
 */
import { boundedCap } from "../src/routing/bounded-load";
import type {
  BackendSpec,
  RouteContext,
  RouteDecision,
  RouteOutcome,
  RouteRequest,
} from "../src/routing/types";
import type { Knowledge } from "./clairvoyant-knowledge";
import { EngineModel } from "./model/engine-model";
import type { EngineEvent, EngineRequest } from "./model/types";
import type { PreparedWorkload } from "./prepare";
import type { RequestView } from "./request-view";
import type { RouterFactory, SimRouter } from "./simulator";

export const CLAIRVOYANT_OBJECTIVES = ["ttft", "total"] as const;
export type ClairvoyantObjective = (typeof CLAIRVOYANT_OBJECTIVES)[number];

/** Report name of each objective's run; `_capped` within the bounded-load cap; `tag` names a cut-down knowledge. */
export function clairvoyantName(objective: ClairvoyantObjective, capped = false, tag = ""): string {
  return `clairvoyant_${objective}${tag}${capped ? "_capped" : ""}`;
}

/** Its request view: the whole prompt, exactly (it reads the engine's own request, true output included). */
export const CLAIRVOYANT_VIEW: RequestView = { keys: "whole-prompt", promptTokens: "exact", output: "none" };

/** Steps past this many engine boundaries without the awaited first tokens: the engine model is stuck. */
const MAX_STEPS = 10_000_000;

/**
 * Steps `engine` (a copy: it is consumed) from its present until every id in
 * `awaited` has had its first token; returns each one's first-token time and,
 * in `seen`, every other first token on the way.
 */
export function stepUntilFirstTokens(
  engine: EngineModel,
  awaited: ReadonlySet<string>,
  seen?: Map<string, number>,
): Map<string, number> {
  const got = new Map<string, number>();
  for (let steps = 0; got.size < awaited.size; steps++) {
    const t = engine.nextEventTime();
    if (!Number.isFinite(t) || steps > MAX_STEPS)
      throw new Error(`the engine went idle or stuck before the first tokens of ${[...awaited].join(",")}`);
    for (const ev of engine.advance(t) as EngineEvent[]) {
      if (ev.kind !== "first_token") continue;
      if (awaited.has(ev.id)) got.set(ev.id, ev.time);
      else seen?.set(ev.id, ev.time);
    }
  }
  return got;
}

/** What placing `req` on `engine` at `now` costs under `objective`, ms, simulated on `scratch`. */
export function placementCost(
  engine: EngineModel,
  scratch: EngineModel,
  req: EngineRequest,
  now: number,
  objective: ClairvoyantObjective,
): number {
  scratch.copyFrom(engine);
  scratch.submit(req, now);
  const ahead = new Map<string, number>();
  const own = stepUntilFirstTokens(scratch, new Set([req.id]), ahead).get(req.id)! - now;
  if (objective === "ttft" || ahead.size === 0) return own;
  // The same engine without the request: when would those ahead have had their first tokens?
  scratch.copyFrom(engine);
  const without = stepUntilFirstTokens(scratch, new Set(ahead.keys()));
  let added = 0;
  for (const [id, t] of ahead) added += t - without.get(id)!;
  return own + added;
}

/**
 * The reference's router factory for one prepared workload. It must be run
 * with CLAIRVOYANT_VIEW: it matches each routed request to the workload's
 * next request with the same prompt blocks (those a second client sent
 * straight to an engine are never routed, and are skipped).
 */
export function clairvoyantFactory(
  w: PreparedWorkload,
  objective: ClairvoyantObjective,
  /** Told each decision: the request, the backend and the cost it was chosen for (tests, audits). */
  onDecision?: (i: number, backend: number, costMs: number) => void,
  /** The bounded-load cap's c; absent: no cap. */
  balanceFactor?: number,
  /** What it knows (clairvoyant-knowledge.ts); absent: everything, exactly. */
  knows: Knowledge = {},
): RouterFactory {
  return (backends: readonly BackendSpec[], readings, engines) => {
    if (engines === undefined) throw new Error("the clairvoyant reference needs the simulator's engines");
    const lagged = knows.lagMs !== undefined;
    if (lagged && readings.scraped === undefined)
      throw new Error(
        "clairvoyant: a lagged reference needs the simulator's scrape (fleet.scrapeMs = lagMs)",
      );
    const beliefs = knows.outputs;
    // Learned: the mean output of the requests completed so far (usage.completion_tokens), within max_tokens.
    // Counted from the outputs of earlier traffic when it is given (the gateway's history).
    let doneOutputs = knows.learned?.priorSum ?? 0;
    let doneCount = knows.learned?.priorCount ?? 0;
    const outputOf = (i: number): number => {
      const cap = beliefs?.[i];
      if (cap === undefined) return Math.max(1, w.requests[i]!.outputTokens);
      return knows.learned && doneCount > 0
        ? Math.max(1, Math.min(cap, Math.round(doneOutputs / doneCount)))
        : cap;
    };
    const believe = (id: string): number => outputOf(Number(id));
    // One scratch engine per backend, overwritten at every placement (copyFrom reuses its arrays).
    const scratch = engines.map((e) => new EngineModel(e.config));
    // Lagged: what it believes each engine holds (the last scrape + its own placements and completions).
    const believed = lagged ? engines.map((e) => new EngineModel(e.config).copyFrom(e)) : undefined;
    /** The engine it reads for backend b: the believed one, or the real one. */
    const view = believed ?? engines;
    // Fresh state with max_tokens beliefs: each engine copied and its output lengths re-derived at each arrival.
    const revised =
      beliefs !== undefined && !lagged ? engines.map((e) => new EngineModel(e.config)) : undefined;
    /** The engine it simulates a candidate from (placementCost copies it again). */
    const sourceOf = (b: number): EngineModel =>
      revised === undefined ? view[b]! : revised[b]!.copyFrom(engines[b]!).reviseOutputs(believe);
    const bt = w.blockTokens;
    let next = 0;
    const router: SimRouter = {
      route(req: RouteRequest, ctx: RouteContext) {
        // The next workload request with these blocks: requests a second client sent around it are skipped.
        let i = next;
        while (i < w.promptBlocks.length && req.blocks !== w.promptBlocks[i]) i++;
        if (i >= w.promptBlocks.length)
          throw new Error(`clairvoyant: routed request is none of the workload's requests from ${next} on`);
        next = i + 1;
        const r = w.requests[i]!;
        const engineReq: EngineRequest = {
          id: `clairvoyant-${i}`,
          blocks: w.promptBlocks[i]!,
          promptTokens: r.promptTokens,
          outputTokens: outputOf(i),
        };
        let best = -1;
        let bestCost = Number.POSITIVE_INFINITY;
        let bestHeld = Number.POSITIVE_INFINITY;
        let available = 0;
        // Requests each engine holds before this one (running or waiting: every one routed here, not done).
        const held = view.map((e) => {
          const m = e.metrics(ctx.now);
          return m.running + m.waiting;
        });
        const total = held.reduce((a, x) => a + x, 0);
        const cap =
          balanceFactor === undefined
            ? Number.POSITIVE_INFINITY
            : boundedCap(1, engines.length, total, balanceFactor);
        for (let b = 0; b < engines.length; b++) {
          available = Math.max(available, view[b]!.cachedPrefixBlocks(engineReq.blocks));
          if (held[b]! >= cap) continue;
          const cost = placementCost(sourceOf(b), scratch[b]!, engineReq, ctx.now, objective);
          if (cost < bestCost - 1e-6 || (Math.abs(cost - bestCost) <= 1e-6 && held[b]! < bestHeld)) {
            best = b;
            bestCost = cost;
            bestHeld = held[b]!;
          }
        }
        if (best < 0) throw new Error("clairvoyant: every engine at its cap (c must be > 1)");
        onDecision?.(i, best, bestCost);
        const cached = view[best]!.cachedPrefixBlocks(engineReq.blocks);
        // Its own placement goes into what it believes of that engine too (the real one gets it from the simulator).
        if (believed !== undefined) believed[best]!.submit({ ...engineReq, id: String(i) }, ctx.now);
        const decision: RouteDecision = {
          backendId: backends[best]!.id,
          reason: cached > 0 ? "affinity" : "ring",
          expectedCachedTokens: Math.min(cached * bt, r.promptTokens),
          availableCachedTokens: Math.min(available * bt, r.promptTokens),
          inflightAtDecision: bestHeld,
        };
        return { decision, ticket: lagged ? { i, b: best } : undefined };
      },
      complete(ticket: unknown, outcome: RouteOutcome, ctx: RouteContext) {
        if (outcome.outputTokens !== undefined) {
          doneOutputs += outcome.outputTokens;
          doneCount++;
        }
        if (believed === undefined) return;
        // The stream ended: it is gone from that engine, whatever its belief said (a gateway sees the end).
        const { i, b } = ticket as { i: number; b: number };
        believed[b]!.advance(ctx.now);
        believed[b]!.abort(String(i), ctx.now);
      },
      scraped() {
        // A scrape tick: what it believes of each engine becomes the engine as it is now.
        if (believed === undefined) return;
        for (let b = 0; b < engines.length; b++) {
          const e = believed[b]!.copyFrom(engines[b]!);
          if (beliefs !== undefined) e.reviseOutputs(believe);
        }
      },
    };
    return router;
  };
}

/**
 * The request's TTFT with its engine to itself: an idle engine whose cache holds the request's first
 * `hitBlocks` blocks, and nothing else running or queued. Over a run, with the hits a router got, it is
 * the part of each TTFT no placement can remove without a longer hit: prefill compute, no queue.
 * `pristine` is an engine never used (copied into `scratch`, so each request starts from it).
 */
export function aloneTtftMs(
  pristine: EngineModel,
  scratch: EngineModel,
  req: EngineRequest,
  hitBlocks: number,
): number {
  scratch.copyFrom(pristine);
  let t = 0;
  if (hitBlocks > 0) {
    // A prompt of exactly those blocks (+1 token, so each is a full, keyed block) leaves them cached.
    const bt = scratch.config.blockTokens;
    scratch.submit(
      {
        id: "prime",
        blocks: req.blocks.slice(0, hitBlocks),
        promptTokens: hitBlocks * bt + 1,
        outputTokens: 1,
      },
      0,
    );
    for (let at = scratch.nextEventTime(); Number.isFinite(at); at = scratch.nextEventTime()) {
      scratch.advance(at);
      t = at;
    }
  }
  scratch.submit(req, t);
  return stepUntilFirstTokens(scratch, new Set([req.id])).get(req.id)! - t;
}

/**
 * Per request, the longest run of its leading blocks that some earlier request's prompt also had (keys
 * are chained: one key names its whole prefix). No engine can hold more of it, whatever the routing and
 * however large its cache: with aloneTtftMs, a lower bound on each request's TTFT.
 */
export function everSeenHits(promptBlocks: readonly (readonly number[])[]): number[] {
  const seen = new Set<number>();
  return promptBlocks.map((blocks) => {
    let hit = 0;
    while (hit < blocks.length && seen.has(blocks[hit]!)) hit++;
    for (const k of blocks) seen.add(k);
    return hit;
  });
}
