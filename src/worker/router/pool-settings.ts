/**
 * A pool's settings as the routing core takes them: the one mapping from
 * the wire form (PoolSpec, named after the vars) to the Router's backends
 * and options, for the RouterDO and for the Worker's local decisions alike.
 */
import type { BackendSpec, HealthSettings, RouterOptions } from "../../routing";
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
  return { policy, blockTokens: s.blockTokens, balanceFactor: s.balanceFactor, health: healthSettings(s) };
}
