/**
 * A pool's settings as the routing core takes them: the one mapping from
 * the wire form (PoolSpec, named after the vars) to the Router's backends
 * and options, for the RouterDO and for the Worker's local decisions alike.
 */
import type { BackendSpec, HealthSettings, PoolRouterOptions, RouterOptions } from "../../routing";
import type { PolicyName } from "../../routing/types";
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

/** The policy the shadow decides with: what SHADOW asks "what would it have done?" of. */
export const SHADOW_POLICY = "prefix_aware";

/** The pool's Routers: arm A (its policy), arm B when a split is configured, the shadow when on. */
export function poolRouterOptions(s: RouterSettings): PoolRouterOptions {
  const a = routerOptions(s);
  return {
    arms: s.abPolicy === null ? [a] : [a, routerOptions(s, s.abPolicy)],
    percentB: s.abPercent,
    ...(s.shadow ? { shadow: routerOptions(s, SHADOW_POLICY) } : {}),
  };
}

/** The arms' policies, arm A first. */
export function armPolicies(s: RouterSettings): PolicyName[] {
  return s.abPolicy === null ? [s.policy] : [s.policy, s.abPolicy];
}
