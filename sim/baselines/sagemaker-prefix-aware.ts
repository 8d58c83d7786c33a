/**
 * Baseline: Amazon SageMaker real-time endpoint, RoutingStrategy PREFIX_AWARE.
 *
 * Source: the SageMaker API reference (ProductionVariantRoutingConfig,
 * PrefixAwareRoutingConfig); no code is public (see SOURCES.md). Documented:
 * - requests sharing the first PrefixLength characters (OpenAI-compatible
 *   API; bytes of the body for InvokeEndpoint) go to the same instance;
 * - when the in-flight requests on that instance reach ConcurrencyThreshold,
 *   the request goes to "an instance with more available capacity" — the same
 *   words the docs use for LEAST_OUTSTANDING_REQUESTS, so we take the
 *   instance with the fewest in flight (ties at random);
 * - both parameters are required, with no published default
 *   (PrefixLength 1024–65536, ConcurrencyThreshold 1–1024).
 * Not documented, our choice: prefix → instance by weighted rendezvous
 * hashing, so an instance joining or leaving moves only ~1/N of prefixes
 * (the behaviour AWS describes), and the spill is per request (no memory of
 * where a hot prefix spilled).
 *
 * Units: the key is the first k blocks, k = floor(PrefixLength /
 * (charsPerToken × blockTokens)); with chained block keys that is the key of
 * block k−1 (or of the last full block of a shorter prompt). Tenants are
 * isolated because our block keys are seeded with prompt_cache_key.
 */

import { hashKey, hashString } from "../../src/routing/hash";
import type {
  FleetView,
  PolicyPick,
  RouteContext,
  RouteRequest,
  RoutingPolicy,
} from "../../src/routing/types";
import { healthyIndices } from "./fleet-util";

export interface SagemakerOptions {
  /** Characters of the prompt that form the routing key. Required by AWS, no default: we use 8192. */
  readonly prefixLength?: number;
  /** In-flight requests on the prefix's instance at which it spills. Required by AWS, no default: we use 32. */
  readonly concurrencyThreshold?: number;
  /** Characters per token to convert PrefixLength to blocks (the same 4 llm-d's scorer assumes). */
  readonly charsPerToken?: number;
}

export const SAGEMAKER_DEFAULTS = { prefixLength: 8192, concurrencyThreshold: 32, charsPerToken: 4 } as const;

export function createSagemakerPrefixAware(options: SagemakerOptions = {}): RoutingPolicy & {
  /** The instance a prefix key lives on, before any spill (fleet index), or -1 for a prompt with no full block. */
  homeOf(req: RouteRequest, fleet: FleetView): number;
} {
  const cfg = { ...SAGEMAKER_DEFAULTS, ...options };
  if (cfg.prefixLength < 1024 || cfg.prefixLength > 65536) {
    throw new Error(`sagemaker prefixLength: must be 1024..65536 characters, got ${cfg.prefixLength}`);
  }
  if (
    !Number.isInteger(cfg.concurrencyThreshold) ||
    cfg.concurrencyThreshold < 1 ||
    cfg.concurrencyThreshold > 1024
  ) {
    throw new Error(
      `sagemaker concurrencyThreshold: must be an integer 1..1024, got ${cfg.concurrencyThreshold}`,
    );
  }
  const saltCache = new Map<string, number>();
  const salt = (id: string): number => {
    let s = saltCache.get(id);
    if (s === undefined) {
      s = hashString(id, 0);
      saltCache.set(id, s);
    }
    return s;
  };
  /** The routing core's 32-bit key hash, mapped into the open interval (0, 1). */
  const unit = (key: number, id: string): number => (hashKey(key, salt(id)) + 0.5) / 4294967296;

  function homeOf(req: RouteRequest, fleet: FleetView): number {
    const candidates = healthyIndices(fleet);
    const k = Math.max(1, Math.floor(cfg.prefixLength / (cfg.charsPerToken * fleet.blockTokens)));
    const n = Math.min(k, req.blocks.length);
    if (n === 0) return -1;
    const key = req.blocks[n - 1]!;
    // Weighted rendezvous: score = −w / ln(u), highest wins.
    let best = -1;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (const i of candidates) {
      const b = fleet.backends[i]!;
      const score = -b.weight / Math.log(unit(key, b.id));
      if (score > bestScore) {
        bestScore = score;
        best = i;
      }
    }
    return best;
  }

  function leastOutstanding(fleet: FleetView, candidates: readonly number[], random: () => number): number {
    let min = Number.POSITIVE_INFINITY;
    let tied: number[] = [];
    for (const i of candidates) {
      const load = fleet.inflight[i]!;
      if (load < min) {
        min = load;
        tied = [i];
      } else if (load === min) {
        tied.push(i);
      }
    }
    return tied.length === 1 ? tied[0]! : tied[Math.floor(random() * tied.length)]!;
  }

  function pick(req: RouteRequest, fleet: FleetView, ctx: RouteContext): PolicyPick {
    const candidates = healthyIndices(fleet);
    const home = homeOf(req, fleet);
    if (home >= 0 && fleet.inflight[home]! < cfg.concurrencyThreshold) {
      return { index: home, reason: "ring" };
    }
    const index = leastOutstanding(fleet, candidates, ctx.random);
    const reason =
      home < 0 ? "ring" : fleet.inflight[index]! < cfg.concurrencyThreshold ? "spill" : "fallback";
    return { index, reason };
  }

  return { name: "sagemaker", homeOf, pick };
}
