/**
 * One registry from policy name to factory. An unknown name is a
 * configuration error, never a silent default.
 */
import { type ConsistentHashOptions, ConsistentHashPolicy } from "./policies/consistent-hash";
import { LeastOutstandingPolicy } from "./policies/least-outstanding";
import { type PrefixAwareOptions, PrefixAwarePolicy } from "./policies/prefix-aware";
import { RandomPolicy } from "./policies/random";
import { RoundRobinPolicy } from "./policies/round-robin";
import { POLICY_NAMES, type PolicyName, type RoutingPolicy } from "./types";

/** Options understood by the policies; each reads the fields it knows. */
export type PolicyOptions = PrefixAwareOptions & ConsistentHashOptions;

const FACTORIES: { readonly [K in PolicyName]: (options: PolicyOptions) => RoutingPolicy } = {
  prefix_aware: (o) => new PrefixAwarePolicy(o),
  least_outstanding: () => new LeastOutstandingPolicy(),
  round_robin: () => new RoundRobinPolicy(),
  random: () => new RandomPolicy(),
  consistent_hash: (o) => new ConsistentHashPolicy(o),
};

/**
 * The policies that learn from first tokens (RoutingPolicy.onFirstToken: prefix_aware's ledger of predicted
 * prefill ends). Only a request placed by one of them, or by the shadow, is worth the Worker's first-token call
 * (registry.test.ts holds this list to the policies' own hooks).
 */
const LEARNS_FIRST_TOKENS: ReadonlySet<PolicyName> = new Set<PolicyName>(["prefix_aware"]);

/** Whether a policy learns from a request's first token (it implements onFirstToken). */
export function learnsFirstTokens(name: PolicyName): boolean {
  return LEARNS_FIRST_TOKENS.has(name);
}

export function isPolicyName(name: string): name is PolicyName {
  return (POLICY_NAMES as readonly string[]).includes(name);
}

/** A fresh policy instance (policies hold state: one per Router). Throws on an unknown name. */
export function createPolicy(name: PolicyName, options: PolicyOptions = {}): RoutingPolicy {
  if (!isPolicyName(name))
    throw new Error(`unknown routing policy "${String(name)}" (known: ${POLICY_NAMES.join(", ")})`);
  return FACTORIES[name](options);
}
