/** The public API of the routing core. */
export { type AffinityReceipt, BackendAffinity, type SettleResult } from "./affinity-index";
export {
  type HealthChange,
  type HealthRow,
  type HealthSettings,
  HealthTracker,
  validateHealthSettings,
} from "./backend-health";
export {
  anyHealthy,
  boundedCap,
  DEFAULT_BALANCE_FACTOR,
  expectedCachedTokens,
  isEligible,
  leastOverloaded,
} from "./bounded-load";
export { DEFAULT_POLICY, defaultVar, type NumericSetting, SETTINGS, type SettingName } from "./defaults";
export { fmix32, hashKey, hashString } from "./hash";
export { LruBlockSet } from "./lru-block-set";
export { ConsistentHashPolicy } from "./policies/consistent-hash";
export {
  type CostModelOptions,
  DEFAULT_PREFILL_TOKENS_PER_SEC,
  PrefillCostModel,
} from "./policies/cost-model";
export { LeastOutstandingPolicy } from "./policies/least-outstanding";
export { FleetRing, placeOnRing, RING_KEY_BLOCKS, ringKey } from "./policies/placement";
export { type PrefixAwareOptions, PrefixAwarePolicy } from "./policies/prefix-aware";
export { RandomPolicy } from "./policies/random";
export { RoundRobinPolicy } from "./policies/round-robin";
export { createPolicy, isPolicyName, type PolicyOptions } from "./registry";
export { RetryBudget } from "./retry-budget";
export { HashRing, type RingMember, VNODES_PER_MEAN_WEIGHT } from "./ring";
export {
  type BackendStats,
  DEFAULT_HEALTH_SETTINGS,
  NoHealthyBackendError,
  Router,
  type RouterOptions,
  type RouterStats,
  type RouteTicket,
} from "./router";
export { seededRandom } from "./seeded-random";
export * from "./types";
