/**
 * Where the affinity index loses against the engines' true caches: one run of
 * a routing-core policy (prefix_aware by default) with the gateway's request
 * view, compared request by request with the engine model.
 *
 * For every request, in tokens a hit could cover (a hit never covers a
 * prompt's last token):
 * - believed: what the index expected on each backend at the decision
 *   (FleetView.matchedBlocks, read through a pass-through policy wrapper:
 *   the index is read-only there, so the run is the same as without it);
 * - present: what each engine held of the prompt at the decision
 *   (EngineModel.cachedPrefixBlocks, read-only);
 * - hit: what the chosen engine reported when the request completed.
 *
 * The gaps, summed over the run:
 * - over-belief: believed > hit on the chosen backend. Split by whether the
 *   engine held it at the decision (present ≥ believed: evicted while the
 *   request queued) or not (the index kept blocks the engine had evicted:
 *   capacity estimate, eviction order, a missed correction);
 * - under-belief: hit > believed. Split into what lies past the gateway's
 *   key window (the index cannot see it), what the index's stride rounds
 *   away (less than one index entry), and the rest (the index forgot or
 *   never learned blocks the engine had: its own eviction, a correction that
 *   evicted too much);
 * - elsewhere: the longest prefix present on any engine minus the chosen
 *   engine's hit, when positive: cache the fleet had and the request did not
 *   use. Split by whether the index knew that backend held at least as much
 *   (a cost decision: load) or not (an index error).
 */

import { createPolicy } from "../src/routing/registry";
import { Router } from "../src/routing/router";
import { DEFAULT_INDEX_STRIDE_TOKENS } from "../src/routing/router-options";
import type { FleetView, PolicyName, RouteContext, RouteRequest, RoutingPolicy } from "../src/routing/types";
import type { EngineModel } from "./model/engine-model";
import { readingsOf } from "./policies";
import type { PreparedWorkload } from "./prepare";
import { GATEWAY_VIEW } from "./request-view";
import { type FleetConfig, type PolicyResult, type RouterFactory, simulatePolicy } from "./simulator";

export interface GapSplit {
  /** Requests with a gap of this kind. */
  readonly requests: number;
  readonly tokens: number;
}

export interface IndexAudit {
  readonly policy: string;
  readonly result: PolicyResult;
  readonly requests: number;
  readonly promptTokens: number;
  /** Reusable tokens (a hit never covers the last token), summed. */
  readonly reusableTokens: number;
  /** Σ believed on the chosen backend. */
  readonly believedTokens: number;
  /** Σ present on the chosen engine at the decision. */
  readonly presentTokens: number;
  /** Σ hit reported by the chosen engine. */
  readonly hitTokens: number;
  /** Σ longest prefix present on any engine at the decision. */
  readonly bestPresentTokens: number;
  readonly over: {
    readonly total: GapSplit;
    readonly presentAtDecision: GapSplit;
    readonly absent: GapSplit;
  };
  readonly under: {
    readonly total: GapSplit;
    readonly pastWindow: GapSplit;
    readonly stride: GapSplit;
    readonly unknown: GapSplit;
  };
  readonly elsewhere: { readonly total: GapSplit; readonly known: GapSplit; readonly unknown: GapSplit };
  /** Router stats at the end: index entries corrected (evicted on a short hit) and forgotten. */
  readonly correctedBlocks: number;
  readonly forgottenBlocks: number;
  readonly indexStride: number;
}

class Gap {
  requests = 0;
  tokens = 0;
  add(tokens: number): void {
    if (tokens <= 0) return;
    this.requests++;
    this.tokens += tokens;
  }
  get split(): GapSplit {
    return { requests: this.requests, tokens: this.tokens };
  }
}

/** A policy that records each decision's index beliefs, then defers to `inner` for everything. */
class BeliefRecorder implements RoutingPolicy {
  readonly name: string;
  /** Matched blocks per backend at the last pick (a copy). */
  last = new Int32Array(0);

  constructor(private readonly inner: RoutingPolicy) {
    this.name = inner.name;
  }

  pick(req: RouteRequest, fleet: FleetView, ctx: RouteContext) {
    this.last =
      req.blocks.length > 0 ? fleet.matchedBlocks(req.blocks).slice() : new Int32Array(fleet.backends.length);
    return this.inner.pick(req, fleet, ctx);
  }

  onRouted(req: RouteRequest, index: number, fleet: FleetView, ctx: RouteContext): void {
    this.inner.onRouted?.(req, index, fleet, ctx);
  }

  onCompleted(...args: Parameters<NonNullable<RoutingPolicy["onCompleted"]>>): void {
    this.inner.onCompleted?.(...args);
  }

  onBackendsChanged(...args: Parameters<NonNullable<RoutingPolicy["onBackendsChanged"]>>): void {
    this.inner.onBackendsChanged?.(...args);
  }
}

export function auditIndex(
  w: PreparedWorkload,
  fleet: FleetConfig,
  policy: PolicyName = "prefix_aware",
): IndexAudit {
  const bt = w.blockTokens;
  const n = w.requests.length;
  const recorder = new BeliefRecorder(createPolicy(policy));
  let router: Router | undefined;
  // Engine readings as our policies get them in every run (readingsOf): the scrape's, none when it is off.
  const makeRouter: RouterFactory = (backends, readings) => {
    router = new Router(backends, { policy: recorder, blockTokens: bt, ...readingsOf(policy, readings) });
    return router;
  };
  const believed = new Float64Array(n);
  const present = new Float64Array(n);
  const reusable = new Float64Array(n);
  const window = new Float64Array(n);
  const over = { total: new Gap(), presentAtDecision: new Gap(), absent: new Gap() };
  const under = { total: new Gap(), pastWindow: new Gap(), stride: new Gap(), unknown: new Gap() };
  const elsewhere = { total: new Gap(), known: new Gap(), unknown: new Gap() };
  const bestPresent = new Float64Array(n);
  const knownBest = new Uint8Array(n);
  // The Router's default stride (router-options.ts): one index entry per DEFAULT_INDEX_STRIDE_TOKENS.
  const strideTokens = Math.max(1, Math.floor(DEFAULT_INDEX_STRIDE_TOKENS / bt)) * bt;
  let promptTokens = 0;
  const sums = { believed: 0, present: 0, hit: 0, reusable: 0, best: 0 };

  const result = simulatePolicy(w, fleet, policy, makeRouter, GATEWAY_VIEW, undefined, {
    routed(i, backend, _decision, engines: readonly EngineModel[]) {
      const req = w.requests[i]!;
      const blocks = w.promptBlocks[i]!;
      const cap = Math.max(0, Math.floor((req.promptTokens - 1) / bt)) * bt;
      reusable[i] = cap;
      window[i] = Math.min(cap, w.gatewayBlocks[i]!.length * bt);
      believed[i] = Math.min(cap, recorder.last[backend]! * bt);
      let best = 0;
      let bestAt = -1;
      for (let j = 0; j < engines.length; j++) {
        const p = Math.min(cap, engines[j]!.cachedPrefixBlocks(blocks) * bt);
        if (j === backend) present[i] = p;
        if (p > best) {
          best = p;
          bestAt = j;
        }
      }
      bestPresent[i] = best;
      // The index knew a backend held at least this much (within its window): a cost choice, not an error.
      knownBest[i] = bestAt >= 0 && recorder.last[bestAt]! * bt >= Math.min(best, window[i]!) ? 1 : 0;
    },
    done(i, _backend, cachedTokens) {
      const hit = Math.min(reusable[i]!, cachedTokens);
      const b = believed[i]!;
      sums.believed += b;
      sums.present += present[i]!;
      sums.hit += hit;
      sums.reusable += reusable[i]!;
      sums.best += bestPresent[i]!;
      promptTokens += w.requests[i]!.promptTokens;
      if (b > hit) {
        over.total.add(b - hit);
        if (present[i]! >= b) over.presentAtDecision.add(b - hit);
        else {
          over.presentAtDecision.add(Math.max(0, present[i]! - hit));
          over.absent.add(b - Math.max(hit, present[i]!));
        }
      } else if (hit > b) {
        under.total.add(hit - b);
        const inWindow = Math.min(hit, window[i]!);
        under.pastWindow.add(hit - Math.max(inWindow, b));
        const gap = Math.max(0, inWindow - b);
        if (gap < strideTokens) under.stride.add(gap);
        else under.unknown.add(gap);
      }
      const missed = bestPresent[i]! - hit;
      if (missed > 0) {
        elsewhere.total.add(missed);
        (knownBest[i] ? elsewhere.known : elsewhere.unknown).add(missed);
      }
    },
  });
  const stats = router!.stats();
  return {
    policy,
    result,
    requests: n,
    promptTokens,
    reusableTokens: sums.reusable,
    believedTokens: sums.believed,
    presentTokens: sums.present,
    hitTokens: sums.hit,
    bestPresentTokens: sums.best,
    over: {
      total: over.total.split,
      presentAtDecision: over.presentAtDecision.split,
      absent: over.absent.split,
    },
    under: {
      total: under.total.split,
      pastWindow: under.pastWindow.split,
      stride: under.stride.split,
      unknown: under.unknown.split,
    },
    elsewhere: {
      total: elsewhere.total.split,
      known: elsewhere.known.split,
      unknown: elsewhere.unknown.split,
    },
    correctedBlocks: stats.correctedBlocks,
    forgottenBlocks: stats.forgottenBlocks,
    indexStride: stats.indexStride,
  };
}
