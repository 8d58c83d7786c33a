/**
 * A pool's settings as the routing core takes them: the one mapping from
 * the wire form (PoolSpec, named after the vars) to the Router's backends
 * and options, for the RouterDO and for the Worker's local decisions alike.
 */
import type { BackendSpec, HealthSettings, PoolRouterOptions, RouterOptions } from "../../routing";
import { engineSignalMaxAgeMs } from "../../routing/defaults";
import type { EngineSignals, PolicyName } from "../../routing/types";
import type { PoolSpec, RouterSettings } from "./router-rpc";

/** The pool's backends as routing sees them (no urls). */
export function backendSpecs(spec: PoolSpec): BackendSpec[] {
  return spec.backends.map((b) => ({ id: b.id, weight: b.weight, kvCacheTokens: b.kvCacheTokens }));
}

/** Outlier detection with the pool's settings. */
export function healthSettings(s: RouterSettings): HealthSettings {
  return {
    fall: s.ejectAfterFaults,
    rise: s.restoreAfterChecks,
    maxEjectionPercent: s.maxEjectionPercent,
    probeIntervalMs: s.healthProbeSeconds * 1000,
  };
}

/** The Router's options for a pool (its policy unless another is given). */
export function routerOptions(s: RouterSettings, policy = s.policy): RouterOptions {
  return {
    policy,
    blockTokens: s.blockTokens,
    balanceFactor: s.balanceFactor,
    health: healthSettings(s),
    ...(s.engineScrapeMs > 0 ? { engineSignalMaxAgeMs: engineSignalMaxAgeMs(s.engineScrapeMs) } : {}),
  };
}

/** Each backend's latest engine reading, by index (the RouterDO's scrape: durable-objects/engine-scrape.ts). */
export type EngineReadings = (i: number) => EngineSignals | undefined;

/** The policy the shadow decides with: what SHADOW asks "what would it have done?" of. */
export const SHADOW_POLICY = "prefix_aware";

/**
 * The pool's Routers: arm A (its policy), arm B when a split is configured,
 * the shadow when on; each reads `readings` when the scrape is on.
 */
export function poolRouterOptions(s: RouterSettings, readings?: EngineReadings): PoolRouterOptions {
  const withReadings = (o: RouterOptions): RouterOptions =>
    readings !== undefined && s.engineScrapeMs > 0 ? { ...o, engineSignals: readings } : o;
  const a = withReadings(routerOptions(s));
  return {
    arms: s.abPolicy === null ? [a] : [a, withReadings(routerOptions(s, s.abPolicy))],
    percentB: s.abPercent,
    ...(s.shadow ? { shadow: withReadings(routerOptions(s, SHADOW_POLICY)) } : {}),
  };
}

/** The arms' policies, arm A first. */
export function armPolicies(s: RouterSettings): PolicyName[] {
  return s.abPolicy === null ? [s.policy] : [s.policy, s.abPolicy];
}
