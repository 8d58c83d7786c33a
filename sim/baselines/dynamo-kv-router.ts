/**
 * Baseline: NVIDIA Dynamo KV router, `DefaultWorkerSelector`.
 *
 * Source: ai-dynamo/dynamo lib/llm/src/kv_router/scheduler.rs, config.rs,
 * sequence.rs (see SOURCES.md). For each worker w:
 *
 *   logit(w) = overlap_score_weight × prefill_tokens(w) / block_size + decode_blocks(w)
 *   prefill_tokens(w) = active prefill tokens on w + (isl − overlap(w) × block_size)
 *   decode_blocks(w)  = active blocks on w + request blocks not active on w
 *
 * overlap(w) comes from the KV indexer, fed by the engines' KV events: exact
 * cache contents, here `engineSignals.cachedPrefixBlocks`. Lowest logit wins.
 * Defaults: overlap_score_weight 1.0, router_temperature 0.0 (deterministic);
 * ties are broken by the smaller indexer tree, then uniformly at random. With
 * a temperature > 0 the code samples a softmax over range-normalised, negated
 * logits; we follow it with ctx.random.
 */

import type {
  BackendSpec,
  FleetView,
  PolicyPick,
  RouteContext,
  RouteRequest,
  RoutingPolicy,
} from "../../src/routing/types";
import { ActiveSequences } from "./dynamo-active-sequences";
import { healthyIndices, requireSignals } from "./fleet-util";

export interface DynamoOptions {
  /** config.rs default 1.0. */
  readonly overlapScoreWeight?: number;
  /** config.rs default 0.0. */
  readonly routerTemperature?: number;
}

export const DYNAMO_DEFAULTS = { overlapScoreWeight: 1, routerTemperature: 0 } as const;

export interface DynamoCost {
  readonly overlapBlocks: number;
  readonly prefillTokens: number;
  readonly decodeBlocks: number;
  readonly logit: number;
}

interface InFlight {
  readonly workerId: string;
  readonly blocks: readonly number[];
  readonly uncapped: number;
  readonly prefillTokens: number;
  prefillDone: boolean;
}

/**
 * Dynamo releases a request's prefill tokens when its first token arrives.
 * The RoutingPolicy contract has no such hook; a simulator that has the
 * event may call this one (otherwise prefill load is held until completion).
 */
export interface FirstTokenAware {
  onFirstToken(req: RouteRequest, index: number, ctx: RouteContext): void;
}

export function isFirstTokenAware(policy: RoutingPolicy): policy is RoutingPolicy & FirstTokenAware {
  return typeof (policy as Partial<FirstTokenAware>).onFirstToken === "function";
}

/** scheduler.rs `softmax_sample` for temperature > 0: returns a position in `logits`. */
export function softmaxSample(logits: readonly number[], temperature: number, random: () => number): number {
  const min = Math.min(...logits);
  const max = Math.max(...logits);
  if (min === max) return Math.min(logits.length - 1, Math.floor(random() * logits.length));
  const range = max - min;
  const scaled = logits.map((v) => -(v / range) / temperature);
  const top = Math.max(...scaled);
  const weights = scaled.map((v) => Math.exp(v - top));
  const sum = weights.reduce((a, b) => a + b, 0);
  const u = random();
  let cum = 0;
  for (let i = 0; i < weights.length; i++) {
    cum += weights[i]! / sum;
    if (u <= cum) return i;
  }
  return logits.length - 1;
}

export function createDynamoKvRouter(options: DynamoOptions = {}): RoutingPolicy &
  FirstTokenAware & {
    /** Per-candidate costs of the last pick (fleet index → cost), for tests and reports. */
    lastCosts(): ReadonlyMap<number, DynamoCost>;
    activeFor(backendId: string): ActiveSequences;
  } {
  const cfg = { ...DYNAMO_DEFAULTS, ...options };
  const workers = new Map<string, ActiveSequences>();
  const inflight = new Map<RouteRequest, InFlight>();
  let costs = new Map<number, DynamoCost>();

  const activeFor = (id: string): ActiveSequences => {
    let seq = workers.get(id);
    if (seq === undefined) {
      seq = new ActiveSequences();
      workers.set(id, seq);
    }
    return seq;
  };
  /**
   * Full blocks of the prompt we were given no keys for. The simulator gives
   * Dynamo every block (its router hashes the whole tokenized prompt), so
   * this is 0 there; a caller that passes a capped prefix gets them counted
   * as new, unshared blocks.
   */
  const uncappedOf = (req: RouteRequest, bt: number): number =>
    Math.max(0, Math.floor(req.promptTokens / bt) - req.blocks.length);

  function pick(req: RouteRequest, fleet: FleetView, ctx: RouteContext): PolicyPick {
    const signalsOf = requireSignals(fleet, "dynamo");
    const candidates = healthyIndices(fleet);
    const bt = fleet.blockTokens;
    const uncapped = uncappedOf(req, bt);
    costs = new Map();
    const logits: number[] = [];
    let maxOverlap = 0;
    for (const i of candidates) {
      const signals = signalsOf(i);
      if (signals.cachedPrefixBlocks === undefined) {
        throw new Error("dynamo baseline needs engineSignals.cachedPrefixBlocks (KV events)");
      }
      const overlapBlocks = signals.cachedPrefixBlocks(req.blocks);
      maxOverlap = Math.max(maxOverlap, overlapBlocks);
      const seq = activeFor(fleet.backends[i]!.id);
      const prefillTokens = seq.activeTokens() + Math.max(0, req.promptTokens - overlapBlocks * bt);
      const decodeBlocks = seq.activeBlocks() + seq.newBlocks(req.blocks, uncapped);
      const logit = (cfg.overlapScoreWeight * prefillTokens) / bt + decodeBlocks;
      costs.set(i, { overlapBlocks, prefillTokens, decodeBlocks, logit });
      logits.push(logit);
    }

    let index: number;
    if (cfg.routerTemperature > 0) {
      index = candidates[softmaxSample(logits, cfg.routerTemperature, ctx.random)]!;
    } else {
      const min = Math.min(...logits);
      const tied = candidates.filter((_, c) => logits[c] === min);
      index = tied.length === 1 ? tied[0]! : breakTie(tied, fleet, signalsOf, ctx.random);
    }
    const overlap = costs.get(index)!.overlapBlocks;
    const reason = overlap < maxOverlap ? "spill" : overlap > 0 ? "affinity" : "ring";
    return { index, reason };
  }

  function onRouted(req: RouteRequest, index: number, fleet: FleetView): void {
    const backend = fleet.backends[index];
    if (backend === undefined) return;
    const bt = fleet.blockTokens;
    const overlap = fleet.engineSignals?.(index)?.cachedPrefixBlocks?.(req.blocks) ?? 0;
    const prefillTokens = Math.max(0, req.promptTokens - overlap * bt);
    const record: InFlight = {
      workerId: backend.id,
      blocks: req.blocks,
      uncapped: uncappedOf(req, bt),
      prefillTokens,
      prefillDone: false,
    };
    activeFor(backend.id).add(record.blocks, record.uncapped, prefillTokens);
    inflight.set(req, record);
  }

  function onFirstToken(req: RouteRequest): void {
    const record = inflight.get(req);
    if (record === undefined || record.prefillDone) return;
    record.prefillDone = true;
    workers.get(record.workerId)?.completePrefill(record.prefillTokens);
  }

  function onCompleted(req: RouteRequest): void {
    const record = inflight.get(req);
    if (record === undefined) return;
    inflight.delete(req);
    const seq = workers.get(record.workerId);
    if (seq === undefined) return;
    if (!record.prefillDone) seq.completePrefill(record.prefillTokens);
    seq.free(record.blocks, record.uncapped);
  }

  function onBackendsChanged(backends: readonly BackendSpec[]): void {
    const ids = new Set(backends.map((b) => b.id));
    for (const id of [...workers.keys()]) if (!ids.has(id)) workers.delete(id);
  }

  return {
    name: "dynamo",
    lastCosts: () => costs,
    activeFor,
    pick,
    onRouted,
    onFirstToken,
    onCompleted,
    onBackendsChanged,
  };
}

/**
 * Equal logits: the smaller indexer tree wins (fewer cached blocks), then a
 * uniform draw. The tree size is the number of blocks the worker's KV events
 * say it holds; we estimate it as KV usage × capacity in blocks.
 */
function breakTie(
  tied: readonly number[],
  fleet: FleetView,
  signalsOf: (i: number) => { readonly kvUsage: number },
  random: () => number,
): number {
  const sizes = tied.map((i) =>
    Math.round(signalsOf(i).kvUsage * (fleet.backends[i]!.kvCacheTokens / fleet.blockTokens)),
  );
  if (sizes.every((s) => s === sizes[0])) return tied[Math.floor(random() * tied.length)]!;
  let best = 0;
  for (let t = 1; t < tied.length; t++) if (sizes[t]! < sizes[best]!) best = t;
  return tied[best]!;
}
