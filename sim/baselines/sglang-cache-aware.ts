/**
 * Baseline: SGLang model gateway (formerly sgl-router), policy `cache_aware`.
 *
 * Source: sgl-project/sglang sgl-model-gateway/src/policies/cache_aware.rs and
 * tree.rs; defaults from sgl-model-gateway/bindings/python/sglang_router/
 * router_args.py (the launcher's defaults). See SOURCES.md for commits.
 *
 * Per request:
 * 1. load = the gateway's own count of in-flight requests per worker. If
 *    (max − min) > balance_abs_threshold AND max > min × balance_rel_threshold
 *    (min/max over ALL workers, as the Rust does), route to the healthy worker
 *    with the fewest in flight (shortest queue), still recording the prefix in
 *    the tree.
 * 2. Otherwise match the request against the shared approximate tree. If
 *    matched / total > cache_threshold, route to the tenant the tree names;
 *    else to the healthy worker with the fewest in flight.
 * 3. The chosen worker's tree gets the request's prefix. Every
 *    eviction_interval_secs the tree evicts LRU leaves down to max_tree_size
 *    per worker.
 */

import type {
  BackendSpec,
  FleetView,
  PolicyPick,
  RouteContext,
  RouteRequest,
  RoutingPolicy,
} from "../../src/routing/types";
import { healthyIndices, leastInflight } from "./fleet-util";
import { SglangTree } from "./sglang-tree";

export interface SglangCacheAwareOptions {
  /** router_args.py default 0.3. */
  readonly cacheThreshold?: number;
  /** router_args.py default 64. */
  readonly balanceAbsThreshold?: number;
  /** router_args.py default 1.5. */
  readonly balanceRelThreshold?: number;
  /** router_args.py default 120 s. */
  readonly evictionIntervalSecs?: number;
  /** router_args.py default 2^26, in characters per worker. */
  readonly maxTreeSizeChars?: number;
  /**
   * Characters per token used to convert max_tree_size to blocks. 4 is the
   * rule of thumb the Gateway API Inference Extension also uses.
   */
  readonly charsPerToken?: number;
}

export const SGLANG_DEFAULTS = {
  cacheThreshold: 0.3,
  balanceAbsThreshold: 64,
  balanceRelThreshold: 1.5,
  evictionIntervalSecs: 120,
  maxTreeSizeChars: 2 ** 26,
  charsPerToken: 4,
} as const;

interface PendingInsert {
  readonly req: RouteRequest;
  /** false when the Rust falls back to "first healthy worker" without updating the tree. */
  readonly insert: boolean;
}

export function createSglangCacheAware(options: SglangCacheAwareOptions = {}): RoutingPolicy & {
  readonly tree: SglangTree;
} {
  const cfg = { ...SGLANG_DEFAULTS, ...options };
  const tree = new SglangTree();
  let lastEvictionMs: number | undefined;
  let pending: PendingInsert | undefined;

  /** The Rust runs eviction on a background thread every interval; we run it when virtual time passes one. */
  function maybeEvict(now: number, blockTokens: number): void {
    const intervalMs = cfg.evictionIntervalSecs * 1000;
    if (lastEvictionMs === undefined) {
      lastEvictionMs = now;
      return;
    }
    if (intervalMs <= 0 || now - lastEvictionMs < intervalMs) return;
    lastEvictionMs = now - ((now - lastEvictionMs) % intervalMs);
    const maxBlocks = Math.max(1, Math.floor(cfg.maxTreeSizeChars / (cfg.charsPerToken * blockTokens)));
    tree.evictBySize(maxBlocks);
  }

  function pick(req: RouteRequest, fleet: FleetView, ctx: RouteContext): PolicyPick {
    maybeEvict(ctx.now, fleet.blockTokens);
    const healthy = healthyIndices(fleet);
    const bt = fleet.blockTokens;

    let min = Number.POSITIVE_INFINITY;
    let max = 0;
    for (const load of fleet.inflight) {
      if (load < min) min = load;
      if (load > max) max = load;
    }
    if (!Number.isFinite(min)) min = 0;
    const imbalanced = max - min > cfg.balanceAbsThreshold && max > min * cfg.balanceRelThreshold;
    if (imbalanced) {
      const index = leastInflight(fleet, healthy);
      pending = { req, insert: true };
      return { index, reason: "spill" };
    }

    const match = tree.prefixMatch(req.blocks);
    // Match rate over the whole prompt, as the Rust divides by the whole request text.
    const totalBlocks = Math.max(req.blocks.length, req.promptTokens / bt);
    const matchRate = totalBlocks > 0 ? match.matchedBlocks / totalBlocks : 0;
    if (matchRate > cfg.cacheThreshold && match.tenant !== undefined) {
      const index = fleet.backends.findIndex((b) => b.id === match.tenant);
      if (index >= 0 && fleet.healthy[index]) {
        pending = { req, insert: true };
        return { index, reason: "affinity" };
      }
      // The named worker is gone (forget it) or unhealthy: the Rust returns the first healthy worker
      // and does not touch the tree.
      if (index < 0) tree.removeTenant(match.tenant);
      const fallback = healthy[0]!;
      pending = { req, insert: false };
      return { index: fallback, reason: "fallback" };
    }
    const index = leastInflight(fleet, healthy);
    pending = { req, insert: true };
    return { index, reason: "ring" };
  }

  function onRouted(req: RouteRequest, index: number, fleet: FleetView): void {
    const insert = pending?.req === req ? pending.insert : true;
    pending = undefined;
    const backend = fleet.backends[index];
    if (insert && backend !== undefined) tree.insert(req.blocks, backend.id);
  }

  function onBackendsChanged(backends: readonly BackendSpec[]): void {
    const ids = new Set(backends.map((b) => b.id));
    for (const tenant of tree.tenantNames()) if (!ids.has(tenant)) tree.removeTenant(tenant);
    // add_worker inserts the empty string: the worker becomes a tenant of the root.
    for (const id of ids) tree.insert([], id);
  }

  return { name: "sglang", tree, pick, onRouted, onBackendsChanged };
}
