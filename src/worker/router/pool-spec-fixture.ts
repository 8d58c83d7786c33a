/**
 * A pool spec for tests of the router's callers (the local router, cells, the
 * RouterDO): the shipped defaults of every setting, a fleet of equal
 * backends, and overrides for what a test is about. Imported by tests only;
 * the product builds its specs from the parsed config (config.ts).
 */
import { DEFAULT_POLICY, SETTINGS } from "../../routing/defaults";
import type { FleetBackend, PoolSpec, RouterSettings } from "./router-rpc";

export const TEST_POOL_SETTINGS: RouterSettings = {
  policy: DEFAULT_POLICY,
  blockTokens: SETTINGS.BLOCK_TOKENS.default,
  balanceFactor: SETTINGS.BALANCE_FACTOR.default,
  leaseTtlSeconds: SETTINGS.LEASE_TTL_SECONDS.default,
  healthProbeSeconds: SETTINGS.HEALTH_PROBE_SECONDS.default,
  ejectAfterFaults: SETTINGS.EJECT_AFTER_FAULTS.default,
  restoreAfterChecks: SETTINGS.RESTORE_AFTER_CHECKS.default,
  maxEjectionPercent: SETTINGS.MAX_EJECTION_PERCENT.default,
  retryBudgetPercent: SETTINGS.RETRY_BUDGET_PERCENT.default,
  abPolicy: null,
  abPercent: SETTINGS.AB_PERCENT.default,
  shadow: false,
  engineScrapeMs: SETTINGS.ENGINE_SCRAPE_MS.default,
  maxInflightPerBackend: SETTINGS.MAX_INFLIGHT_PER_BACKEND.default,
  keyShareHeadroomPercent: SETTINGS.KEY_SHARE_HEADROOM_PERCENT.default,
  // Off: the default would make every RouterDO test ask its backends' /v1/models (backend-check.test.ts turns it on).
  backendCheckSeconds: 0,
};

/** A spec over `backends` (weight 1 and `kvCacheTokens` each unless given), with `settings` over the defaults. */
export function testPoolSpec(
  backends: readonly (Pick<FleetBackend, "id" | "url"> & Partial<FleetBackend>)[],
  settings: Partial<RouterSettings> = {},
  kvCacheTokens = 262_144,
): PoolSpec {
  return {
    ...TEST_POOL_SETTINGS,
    ...settings,
    backends: backends.map((b) => ({ weight: 1, kvCacheTokens, ...b })),
  };
}
