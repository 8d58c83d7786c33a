/**
 * What a Router is built from: its options with their defaults applied and
 * checked (the bounds of defaults.ts), and the check of a fleet it is
 * handed. A Router refuses what it cannot route over, with the field it
 * concerns, rather than fail later mid-decision.
 */
import type { HealthSettings, HealthTracker } from "./backend-health";
import { checkSetting, SETTINGS } from "./defaults";
import { createPolicy } from "./registry";
import type { BackendSpec, EngineSignals, PolicyName, RoutingPolicy } from "./types";

export interface RouterOptions {
  policy: PolicyName | RoutingPolicy;
  /** Tokens per KV block; must match the block keys' block size. Default SETTINGS.BLOCK_TOKENS (16, vLLM). */
  blockTokens?: number;
  /** c in cap_i = ceil(c · w_i/Σw · (inflight + 1)). Default SETTINGS.BALANCE_FACTOR (1.25). */
  balanceFactor?: number;
  /**
   * Index every s-th block only. Default: every DEFAULT_INDEX_STRIDE_TOKENS
   * (64) tokens, i.e. 4 at vLLM's 16-token blocks and 1 at 64-token blocks or
   * larger: matches to 64 tokens' resolution with a quarter of the memory and
   * of the work per request, for a match that loses under 64 tokens of
   * prefill (bench/results/micro-routing.md measures both strides).
   */
  indexStride?: number;
  /** prefix_aware's prefill rate before it has learned one, tokens/s (when `policy` is a name). */
  defaultPrefillTokensPerSec?: number;
  engineSignals?: (i: number) => EngineSignals;
  /** Outlier detection; default DEFAULT_HEALTH_SETTINGS. */
  health?: HealthSettings;
  /** Health shared with other Routers of the pool (its A/B arms, its shadow); default: its own. */
  healthTracker?: HealthTracker;
  /** Reads health, never feeds it: a shadow's outcomes are hypothetical (default false). */
  passive?: boolean;
}

/** Default resolution of the affinity index, tokens (see RouterOptions.indexStride). */
export const DEFAULT_INDEX_STRIDE_TOKENS = 64;

/** Outlier detection as the gateway's defaults set it (see defaults.ts). */
export const DEFAULT_HEALTH_SETTINGS: HealthSettings = {
  fall: SETTINGS.EJECT_AFTER_FAULTS.default,
  rise: SETTINGS.RESTORE_AFTER_CHECKS.default,
  maxEjectionPercent: SETTINGS.MAX_EJECTION_PERCENT.default,
  probeIntervalMs: SETTINGS.HEALTH_PROBE_SECONDS.default * 1000,
};

/** RouterOptions with every default applied and every value checked. */
export interface ResolvedRouterOptions {
  readonly policy: RoutingPolicy;
  readonly blockTokens: number;
  readonly balanceFactor: number;
  readonly indexStride: number;
  readonly health: HealthSettings;
  readonly engineSignals?: (i: number) => EngineSignals;
}

export function resolveRouterOptions(options: RouterOptions): ResolvedRouterOptions {
  const blockTokens = checkSetting(
    "BLOCK_TOKENS",
    options.blockTokens ?? SETTINGS.BLOCK_TOKENS.default,
    "blockTokens",
  );
  const balanceFactor = checkSetting(
    "BALANCE_FACTOR",
    options.balanceFactor ?? SETTINGS.BALANCE_FACTOR.default,
    "balanceFactor",
  );
  const policy =
    typeof options.policy === "string"
      ? createPolicy(
          options.policy,
          options.defaultPrefillTokensPerSec === undefined
            ? {}
            : { defaultPrefillTokensPerSec: options.defaultPrefillTokensPerSec },
        )
      : options.policy;
  const indexStride =
    options.indexStride ?? Math.max(1, Math.floor(DEFAULT_INDEX_STRIDE_TOKENS / blockTokens));
  if (!Number.isInteger(indexStride) || indexStride < 1)
    throw new RangeError(`indexStride: must be a positive integer, got ${indexStride}`);
  return {
    policy,
    blockTokens,
    balanceFactor,
    indexStride,
    health: options.health ?? DEFAULT_HEALTH_SETTINGS,
    ...(options.engineSignals !== undefined ? { engineSignals: options.engineSignals } : {}),
  };
}

export function validateBackends(backends: readonly BackendSpec[]): void {
  if (!Array.isArray(backends)) throw new TypeError("backends: must be an array");
  const seen = new Set<string>();
  backends.forEach((b, i) => {
    if (typeof b.id !== "string" || b.id === "")
      throw new Error(`backends[${i}].id: must be a non-empty string`);
    if (seen.has(b.id)) throw new Error(`backends[${i}].id: duplicate id "${b.id}"`);
    seen.add(b.id);
    if (!(b.weight > 0) || !Number.isFinite(b.weight))
      throw new Error(`backends[${i}].weight: must be a finite number > 0, got ${b.weight}`);
    if (!(b.kvCacheTokens > 0) || !Number.isFinite(b.kvCacheTokens))
      throw new Error(`backends[${i}].kvCacheTokens: must be a finite number > 0, got ${b.kvCacheTokens}`);
  });
}
