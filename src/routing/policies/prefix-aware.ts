/**
 * prefix_aware (ours): lowest expected cost among healthy backends under
 * their bounded cap, where cost = queued prefill + uncached prefill + a
 * small in-flight term (cost-model.ts), and the uncached part comes from
 * the affinity index's longest cached prefix on each backend.
 *
 * A request whose best match anywhere is under `minMatchBlocks` (4 blocks,
 * 64 tokens: the span of the ring key) goes to the ring instead: so short a
 * match is a chat template header or a tenant-wide opener, it predicts
 * nothing about the rest of the prompt and saves under ~7 ms of prefill,
 * below the noise of the queue estimate. The ring gives a new prefix one
 * stable home that every gateway replica agrees on.
 *
 * Equal costs are broken by the probe order of the request's divergence key:
 * the key of the first block past the longest known prefix (DESIGN.md's
 * measured warning: keying on where a prefix starts piles every conversation
 * of a shared system prompt onto one backend; keying on where the known
 * part ends spreads them, and still agrees across replicas).
 *
 * Reasons: `affinity` when the chosen backend holds part of the prefix and no
 * backend with a longer match was at its cap; `spill` when one was, or when
 * the chosen backend holds nothing useful while others do (their queues made
 * them costlier); `ring`/`spill` from ring placement; `fallback` when every
 * healthy backend is at its cap.
 */
import { isEligible, leastOverloaded } from "../bounded-load";
import type {
  BackendSpec,
  BlockKey,
  FleetView,
  PolicyPick,
  RouteContext,
  RouteOutcome,
  RouteReason,
  RouteRequest,
  RoutingPolicy,
} from "../types";
import { type CostModelOptions, PrefillCostModel } from "./cost-model";
import { FleetRing, placeOnRing, RING_KEY_BLOCKS, ringKey } from "./placement";

export interface PrefixAwareOptions extends CostModelOptions {
  /** Shortest match (blocks) worth routing on; below it the ring places. Default 4. */
  readonly minMatchBlocks?: number;
  /** Leading blocks forming the ring key. Default 4. */
  readonly ringKeyBlocks?: number;
}

interface Routed {
  readonly uncached: number;
  readonly wait: number;
}

export class PrefixAwarePolicy implements RoutingPolicy {
  readonly name = "prefix_aware";
  readonly model: PrefillCostModel;
  private readonly ring = new FleetRing();
  private readonly minMatchBlocks: number;
  private readonly keyBlocks: number;
  private syncedTo: readonly BackendSpec[] | undefined;
  private readonly routed = new WeakMap<RouteRequest, Routed>();

  constructor(options: PrefixAwareOptions = {}) {
    this.model = new PrefillCostModel(options);
    this.minMatchBlocks = options.minMatchBlocks ?? RING_KEY_BLOCKS;
    this.keyBlocks = options.ringKeyBlocks ?? RING_KEY_BLOCKS;
  }

  pick(req: RouteRequest, fleet: FleetView, ctx: RouteContext): PolicyPick {
    this.sync(fleet.backends);
    const n = req.blocks.length;
    const bt = fleet.blockTokens;
    const matched = n > 0 ? fleet.matchedBlocks(req.blocks) : new Int32Array(fleet.backends.length);
    let longest = 0;
    for (let i = 0; i < matched.length; i++)
      if (fleet.healthy[i] && matched[i]! > longest) longest = matched[i]!;

    if (n === 0 || longest < Math.min(this.minMatchBlocks, n)) {
      const { index, reason } = placeOnRing(this.ring.of(fleet), ringKey(req, this.keyBlocks), fleet);
      return { index, reason, expectedCachedTokens: Math.min(req.promptTokens, matched[index]! * bt) };
    }

    let best = -1;
    let bestCost = Number.POSITIVE_INFINITY;
    let ties = 0;
    for (let i = 0; i < fleet.backends.length; i++) {
      if (!isEligible(fleet, i)) continue;
      const uncached = Math.max(0, req.promptTokens - matched[i]! * bt);
      const cost = this.model.cost(i, uncached, fleet.inflight[i]!, ctx.now);
      if (cost < bestCost) {
        best = i;
        bestCost = cost;
        ties = 1;
      } else if (cost === bestCost) ties++;
    }

    const tieKey: BlockKey = req.blocks[Math.min(longest, n - 1)]!;
    if (best < 0) {
      const index = leastOverloaded(fleet, this.ring.of(fleet).ranks(tieKey));
      return {
        index,
        reason: "fallback",
        expectedCachedTokens: Math.min(req.promptTokens, matched[index]! * bt),
      };
    }
    if (ties > 1) best = this.breakTie(fleet, matched, req, bestCost, tieKey, ctx.now);

    let reason: RouteReason = matched[best]! > 0 ? "affinity" : "spill";
    for (let i = 0; i < fleet.backends.length; i++) {
      if (fleet.healthy[i] && matched[i]! > matched[best]! && !isEligible(fleet, i)) {
        reason = "spill";
        break;
      }
    }
    return { index: best, reason, expectedCachedTokens: Math.min(req.promptTokens, matched[best]! * bt) };
  }

  onRouted(req: RouteRequest, index: number, fleet: FleetView, ctx: RouteContext): void {
    this.sync(fleet.backends);
    const cached = req.blocks.length > 0 ? fleet.matchedBlocks(req.blocks)[index]! * fleet.blockTokens : 0;
    const uncached = Math.max(0, req.promptTokens - cached);
    const wait = this.model.routed(index, uncached, ctx.now);
    this.routed.set(req, { uncached, wait });
  }

  onCompleted(req: RouteRequest, index: number, outcome: RouteOutcome): void {
    const routed = this.routed.get(req);
    this.routed.delete(req);
    if (routed === undefined || !outcome.ok || outcome.ttftMs === undefined) return;
    if (index < 0 || index >= this.model.size) return;
    const prompt = outcome.promptTokens ?? req.promptTokens;
    const uncached =
      outcome.cachedTokens === undefined ? routed.uncached : Math.max(0, prompt - outcome.cachedTokens);
    this.model.observe(index, uncached, outcome.ttftMs, routed.wait);
  }

  onBackendsChanged(backends: readonly BackendSpec[]): void {
    this.sync(backends);
  }

  private sync(backends: readonly BackendSpec[]): void {
    if (this.syncedTo === backends) return;
    this.model.setBackends(backends);
    this.ring.rebuild(backends);
    this.syncedTo = backends;
  }

  /** Among eligible backends at the minimum cost, the earliest in the tie key's probe order. */
  private breakTie(
    fleet: FleetView,
    matched: Int32Array,
    req: RouteRequest,
    bestCost: number,
    tieKey: BlockKey,
    now: number,
  ): number {
    const rank = this.ring.of(fleet).ranks(tieKey);
    let best = -1;
    for (let i = 0; i < fleet.backends.length; i++) {
      if (!isEligible(fleet, i)) continue;
      const uncached = Math.max(0, req.promptTokens - matched[i]! * fleet.blockTokens);
      if (this.model.cost(i, uncached, fleet.inflight[i]!, now) !== bestCost) continue;
      if (best < 0 || rank[i]! < rank[best]!) best = i;
    }
    return best;
  }
}
