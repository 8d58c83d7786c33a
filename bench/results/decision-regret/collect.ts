// Decision regret, the collection: prefix_aware routes a run as bench:sim runs it (its own trajectory), and at
// each decision, before the engine sees the request, every backend's engine is copied and stepped with the
// request until its first token (sim/clairvoyant.ts placementCost, objective "ttft", the request's true
// output length: a measurement, never a router input). Beside it, what prefix_aware's cost model predicted
// there, term by term (PrefixAwarePolicy.costObserver), and what the engine held. An audit only: nothing
// here feeds the router.
import { placementCost } from "../../../sim/clairvoyant";
import { EngineModel } from "../../../sim/model/engine-model";
import type { EngineRequest } from "../../../sim/model/types";
import { readingsOf, viewOf } from "../../../sim/policies";
import type { PreparedWorkload } from "../../../sim/prepare";
import { type FleetConfig, type RouterFactory, simulatePolicy } from "../../../sim/simulator";
import { PrefixAwarePolicy, type PrefixAwareOptions } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import type { EngineInside } from "../audit-run";

/** One backend at one decision: what the cost model said, what the engine would have done, what it held. */
export interface BackendAt {
  /** The request's exact TTFT had it been placed here (engine copy, no later arrivals), ms. */
  ttft: number;
  /** A candidate of the cost model (within its bounds and not held back): the terms below are set. */
  candidate: boolean;
  cost: number;
  queueWait: number;
  memoryWait: number;
  leastWait: number;
  start: number;
  prefill: number;
  kv: number;
  inflightTerm: number;
  repeat: number;
  foreign: number;
  /** Our requests in flight here (the router's count: gateway-observable). */
  ours: number;
  /** The engine's running (prefilling + decoding) and waiting requests (what a scrape reads, unlagged here). */
  running: number;
  waiting: number;
  /** Of the running, those decoding, and the K/V tokens they read per step (engine state, not observable). */
  decoding: number;
  decodeContext: number;
  /** Until the engine's step in progress ends and the request can first be scheduled, ms (engine state, not observable). */
  stepWait: number;
  /** Prompt tokens cached here for this request (engine's truth). */
  cachedTokens: number;
}

export interface Decision {
  i: number;
  now: number;
  promptTokens: number;
  outputTokens: number;
  chosen: number;
  reason: string;
  /** The request's TTFT as the run then gave it (later arrivals included). */
  realized: number;
  at: BackendAt[];
}

/** Engine internals this audit reads beyond EngineInside: the decode batch's context and the step count. */
interface EngineSteps {
  batch: { size: number; context(step: number): number };
  stepsBy(now: number): number;
}

/**
 * Runs prefix_aware over `w` on `fleet` (options as given, defaults otherwise) and returns every decision.
 * The router is built as sim/policies.ts routerFactory builds prefix_aware's, with our policy instance.
 */
export function collectDecisions(
  w: PreparedWorkload,
  fleet: FleetConfig,
  options: PrefixAwareOptions = {},
): {
  decisions: Decision[];
  p99: number;
  p50: number;
  hitRate: number;
  maxLoadRatio: number;
  /** The prefill rate the cost model learned by the run's end, tokens/s (mean over backends). */
  learnedRate: number;
} {
  const n = w.requests.length;
  const decisions: Decision[] = new Array(n);
  const byTicket = new Map<unknown, number>();
  let next = 0;
  const make: RouterFactory = (specs, readings, engines) => {
    if (engines === undefined) throw new Error("decision-regret: the simulator gave no engines");
    const policy = new PrefixAwarePolicy(options);
    const router = new Router(specs, { policy, blockTokens: w.blockTokens, ...readingsOf("prefix_aware", readings) });
    const scratch = engines.map((e) => new EngineModel(e.config));
    const size = specs.length;
    /** Our requests in flight per backend (the simulator routes in arrival order, no second client here). */
    const ours = new Int32Array(size);
    const onBackend = new Int32Array(n);
    let at: BackendAt[] = [];
    policy.costObserver = (b, t, repeat, foreign, cost) => {
      const x = at[b]!;
      x.candidate = true;
      x.cost = cost;
      x.queueWait = t.queueWaitMs;
      x.memoryWait = t.memoryWaitMs;
      x.leastWait = t.leastWaitMs;
      x.start = t.startMs;
      x.prefill = t.prefillMs;
      x.kv = t.kvMs;
      x.inflightTerm = t.inflightMs;
      x.repeat = repeat;
      x.foreign = foreign;
    };
    return {
      route(req, ctx) {
        const i = next++;
        const r = w.requests[i]!;
        const engineReq: EngineRequest = {
          id: `regret-${i}`,
          blocks: w.promptBlocks[i]!,
          promptTokens: r.promptTokens,
          outputTokens: Math.max(1, r.outputTokens),
        };
        at = engines.map((e, b) => {
          const m = e.metrics(ctx.now);
          const x = e as unknown as EngineInside & EngineSteps;
          const decoding = x.batch.size;
          const s = scratch[b]!.copyFrom(e);
          s.submit(engineReq, ctx.now);
          const stepWait = s.nextEventTime() - ctx.now;
          return {
            ttft: placementCost(e, scratch[b]!, engineReq, ctx.now, "ttft"),
            candidate: false,
            cost: Number.POSITIVE_INFINITY,
            queueWait: Number.NaN,
            memoryWait: Number.NaN,
            leastWait: Number.NaN,
            start: Number.NaN,
            prefill: Number.NaN,
            kv: Number.NaN,
            inflightTerm: Number.NaN,
            repeat: Number.NaN,
            foreign: Number.NaN,
            ours: ours[b]!,
            running: m.running,
            waiting: m.waiting,
            decoding,
            decodeContext: x.batch.context(x.stepsBy(ctx.now)),
            stepWait,
            cachedTokens: Math.min(e.cachedPrefixBlocks(engineReq.blocks) * w.blockTokens, r.promptTokens),
          };
        });
        const out = router.route(req, ctx);
        const chosen = specs.findIndex((s) => s.id === out.decision.backendId);
        if (at.length !== size) throw new Error("decision-regret: fleet size changed");
        decisions[i] = {
          i,
          now: ctx.now,
          promptTokens: r.promptTokens,
          outputTokens: r.outputTokens,
          chosen,
          reason: out.decision.reason,
          realized: Number.NaN,
          at,
        };
        byTicket.set(out.ticket, i);
        onBackend[i] = chosen;
        ours[chosen]!++;
        return out;
      },
      complete(ticket, outcome, ctx) {
        const i = byTicket.get(ticket)!;
        byTicket.delete(ticket);
        decisions[i]!.realized = outcome.ttftMs ?? Number.NaN;
        ours[onBackend[i]!]!--;
        router.complete(ticket as Parameters<typeof router.complete>[0], outcome, ctx);
      },
      stats: (now) => router.stats(now),
    };
  };
  const res = simulatePolicy(w, fleet, "prefix_aware", make, viewOf("prefix_aware"));
  return {
    decisions,
    p99: res.ttftP99Ms,
    p50: res.ttftP50Ms,
    hitRate: res.hitRate,
    maxLoadRatio: res.maxLoadRatio,
    learnedRate: res.learnedPrefillTokensPerSec ?? Number.NaN,
  };
}
