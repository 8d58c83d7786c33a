/**
 * Where the gateway's Durable Objects are created: the options of the `get`
 * that may create one (a RouterDO, a KeyLimiterDO), carrying
 * ROUTER_LOCATION_HINT when it is set. Cloudflare honours a hint only when
 * the object does not exist yet, best effort, and never moves an object
 * afterwards; passing it on every `get` costs nothing and means whichever
 * request comes first, the object starts near the fleet.
 */
import type { LOCATION_HINTS, LocationHint } from "../routing/defaults";

/** `get` options for a gateway Durable Object: the hint, or none. */
export function placementOptions(
  hint: LocationHint | undefined,
): DurableObjectNamespaceGetDurableObjectOptions | undefined {
  return hint === undefined ? undefined : { locationHint: hint };
}

// The hints config accepts (src/routing/defaults.ts) are exactly those the runtime's types list: a
// hint added to or dropped from @cloudflare/workers-types fails the typecheck here, not a deploy.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const hintsMatchRuntime: Same<(typeof LOCATION_HINTS)[number], DurableObjectLocationHint> = true;
void hintsMatchRuntime;
