/**
 * Baseline: llm-d inference scheduler / Gateway API Inference Extension
 * endpoint picker, with the default scheduling profile of the published
 * InferencePool Helm chart: queue-scorer ×2, kv-cache-utilization-scorer ×2,
 * prefix-cache-scorer ×3, max-score picker (see SOURCES.md).
 *
 * Scorers (each in [0, 1], weighted and summed):
 * - prefix: matched blocks / request blocks (capped at maxPrefixBlocksToMatch),
 *   from the scheduler's own LRU indexer, updated after the pick (PreRequest).
 * - queue: min-max normalised waiting-queue length over the candidates,
 *   (max − q) / (max − min), or 1 for all when they are equal.
 * - kv-cache utilisation: 1 − KV usage (no normalisation in the code).
 * Picker: highest total; equal totals are broken uniformly at random (the Go
 * picker shuffles before a stable sort).
 */

import type {
  BackendSpec,
  FleetView,
  PolicyPick,
  RouteContext,
  RouteRequest,
  RoutingPolicy,
} from "../../src/routing/types";
import { healthyIndices, requireSignals } from "./fleet-util";
import { LlmdPrefixIndexer } from "./llmd-prefix-indexer";

export interface LlmdOptions {
  readonly prefixWeight?: number;
  readonly queueWeight?: number;
  readonly kvCacheWeight?: number;
  /** plugin.go DefaultMaxPrefixBlocks = 256. */
  readonly maxPrefixBlocksToMatch?: number;
  /** plugin.go DefaultLRUCapacityPerServer = 31250; used only when autoTune is off. */
  readonly lruCapacityPerServer?: number;
  /** plugin.go DefaultConfig.AutoTune = true: LRU capacity = the pod's GPU KV blocks. */
  readonly autoTune?: boolean;
}

export const LLMD_DEFAULTS = {
  prefixWeight: 3,
  queueWeight: 2,
  kvCacheWeight: 2,
  maxPrefixBlocksToMatch: 256,
  lruCapacityPerServer: 31250,
  autoTune: true,
} as const;

export interface LlmdScores {
  readonly prefix: number;
  readonly queue: number;
  readonly kvCache: number;
  readonly total: number;
}

export function createLlmdScheduler(options: LlmdOptions = {}): RoutingPolicy & {
  readonly indexer: LlmdPrefixIndexer;
  /** Per-candidate scores of the last pick (fleet index → scores), for tests and reports. */
  lastScores(): ReadonlyMap<number, LlmdScores>;
} {
  const cfg = { ...LLMD_DEFAULTS, ...options };
  const indexer = new LlmdPrefixIndexer();
  let scores = new Map<number, LlmdScores>();

  const hashesOf = (req: RouteRequest): readonly number[] =>
    req.blocks.length > cfg.maxPrefixBlocksToMatch
      ? req.blocks.slice(0, cfg.maxPrefixBlocksToMatch)
      : req.blocks;

  function pick(req: RouteRequest, fleet: FleetView, ctx: RouteContext): PolicyPick {
    const signalsOf = requireSignals(fleet, "llmd");
    const candidates = healthyIndices(fleet);
    const hashes = hashesOf(req);
    const matches = indexer.matchLongestPrefix(hashes);
    const signals = candidates.map((i) => signalsOf(i));

    let minQ = Number.POSITIVE_INFINITY;
    let maxQ = Number.NEGATIVE_INFINITY;
    for (const s of signals) {
      minQ = Math.min(minQ, s.waiting);
      maxQ = Math.max(maxQ, s.waiting);
    }

    scores = new Map();
    let best = Number.NEGATIVE_INFINITY;
    let bestSet: number[] = [];
    let maxMatch = 0;
    for (let c = 0; c < candidates.length; c++) {
      const i = candidates[c]!;
      const s = signals[c]!;
      const match = matches.get(fleet.backends[i]!.id) ?? 0;
      maxMatch = Math.max(maxMatch, match);
      const prefix = hashes.length === 0 ? 0 : match / hashes.length;
      const queue = maxQ === minQ ? 1 : (maxQ - s.waiting) / (maxQ - minQ);
      const kvCache = 1 - Math.min(1, Math.max(0, s.kvUsage));
      const total = cfg.prefixWeight * prefix + cfg.queueWeight * queue + cfg.kvCacheWeight * kvCache;
      scores.set(i, { prefix, queue, kvCache, total });
      if (total > best) {
        best = total;
        bestSet = [i];
      } else if (total === best) {
        bestSet.push(i);
      }
    }
    const index = bestSet.length === 1 ? bestSet[0]! : bestSet[Math.floor(ctx.random() * bestSet.length)]!;
    const match = matches.get(fleet.backends[index]!.id) ?? 0;
    const reason = match < maxMatch ? "spill" : match > 0 ? "affinity" : "ring";
    return { index, reason };
  }

  function onRouted(req: RouteRequest, index: number, fleet: FleetView): void {
    const backend = fleet.backends[index];
    if (backend === undefined) return;
    // AutoTune: the pod reports its GPU KV blocks (vLLM num_gpu_blocks); ours is kvCacheTokens / block size.
    const gpuBlocks = cfg.autoTune ? backend.kvCacheTokens / fleet.blockTokens : cfg.lruCapacityPerServer;
    indexer.add(hashesOf(req), backend.id, gpuBlocks);
  }

  function onBackendsChanged(backends: readonly BackendSpec[]): void {
    // The Go plugin sweeps pods that left the pool every 2 minutes; we drop them at once.
    const ids = new Set(backends.map((b) => b.id));
    for (const pod of indexer.pods()) if (!ids.has(pod)) indexer.removePod(pod);
  }

  return { name: "llmd", indexer, lastScores: () => scores, pick, onRouted, onBackendsChanged };
}
