/** The public API of the routing core. */
export { type AffinityReceipt, BackendAffinity, type SettleResult } from "./affinity-index";
export { AvailabilityMask } from "./availability";
export {
  type HealthChange,
  type HealthRow,
  type HealthSettings,
  HealthTracker,
  type ProbationRow,
  validateHealthSettings,
} from "./backend-health";
export {
  anyHealthy,
  boundedCap,
  isEligible,
  leastOverloaded,
} from "./bounded-load";
export {
  type CostModelOptions,
  DEFAULT_PREFILL_TOKENS_PER_SEC,
  PrefillCostModel,
} from "./cost-model";
export {
  checkSetting,
  DEFAULT_POLICY,
  defaultVar,
  type NumericSetting,
  SETTINGS,
  type SettingName,
} from "./defaults";
export { fmix32, hashKey, hashString } from "./hash";
export {
  anyBound,
  type BoundedBackend,
  boundOf,
  fullBackends,
  LEASE_ENDS_KEPT,
  LeaseEndClock,
} from "./inflight-bound";
export {
  cellSlots,
  headroomSlots,
  KEY_SHARE_WINDOW_MS,
  KeyDemand,
  type ShareVerdict,
  shareVerdict,
} from "./key-share";
export { LruBlockSet } from "./lru-block-set";
export { FleetRing, placeOnRing, RING_KEY_BLOCKS, ringKey } from "./placement";
export { ConsistentHashPolicy } from "./policies/consistent-hash";
export { LeastOutstandingPolicy } from "./policies/least-outstanding";
export { type PrefixAwareOptions, PrefixAwarePolicy } from "./policies/prefix-aware";
export { RandomPolicy } from "./policies/random";
export { RoundRobinPolicy } from "./policies/round-robin";
export {
  type ArmIndex,
  armOf,
  type PoolDecision,
  PoolRouter,
  type PoolRouterOptions,
  type PoolTicket,
  type ShadowDecision,
} from "./pool-router";
export { createPolicy, isPolicyName, learnsFirstTokens, type PolicyOptions } from "./registry";
export { KeyedRetryBudget, keyedPoolBudget, RetryBudget } from "./retry-budget";
export { HashRing, type RingMember, VNODES_PER_MEAN_WEIGHT } from "./ring";
export {
  NoHealthyBackendError,
  Router,
  type RouteTicket,
} from "./router";
export {
  DEFAULT_HEALTH_SETTINGS,
  DEFAULT_INDEX_STRIDE_TOKENS,
  type RouterOptions,
  resolveRouterOptions,
} from "./router-options";
export type { BackendStats, RouterStats } from "./router-stats";
export { seededRandom } from "./seeded-random";
export * from "./types";
