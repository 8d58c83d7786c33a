/**
 * Every tunable of the gateway with its default and its bounds, written
 * once. The Worker's config validation (src/worker/config.ts), the routing
 * core and the simulator read them from here; a test checks that
 * wrangler.toml's [vars] carry these defaults. Pure data: it lives in the
 * routing core only because the core may import nothing outside itself.
 *
 * Each entry says why its default is what it is; the README's configuration
 * table is the operator's view of the same facts. The fixed bounds of one
 * HTTP request (body size, JSON shape, output tokens), which no var changes
 * and only the Worker reads, are in src/worker/request/request-limits.ts.
 */

export interface NumericSetting {
  readonly default: number;
  readonly min: number;
  readonly max: number;
  /** Integers only. */
  readonly integer: boolean;
  /** What the number counts, for messages. */
  readonly unit: string;
}

const int = (value: number, min: number, max: number, unit: string): NumericSetting => ({
  default: value,
  min,
  max,
  integer: true,
  unit,
});

export const SETTINGS = {
  /**
   * Leading prompt tokens that form the routing key. 32k, not 8k: on the
   * Mooncake trace (15k-token prompts on average; tuning half, 8 and 16
   * backends, both presets) the hit rate rises from 8k to 32k and little
   * past it (bench/results/policy-work.md), while keying an unseen prompt
   * costs CPU in proportion (~11 ms at 32k, ~22 ms at 64k on this machine;
   * a seen system prompt ~1.5 ms: bench/results/micro-prefix-keys.md).
   */
  PREFIX_TOKENS: int(32_768, 1, 1_048_576, "tokens"),
  /** Tokens per KV block: vLLM's default block size, so our blocks line up with what the engine reuses. */
  BLOCK_TOKENS: int(16, 1, 1024, "tokens"),
  /** The bounded-load factor c (Mirrokni et al.): lower = tighter balance, higher = stickier affinity. */
  BALANCE_FACTOR: { default: 1.25, min: 1, max: 100, integer: false, unit: "factor" } as NumericSetting,
  /** An in-flight slot whose completion never arrives is released after this. */
  LEASE_TTL_SECONDS: int(600, 1, 86_400, "seconds"),
  /** First /health probe of an ejected backend after this; doubles per failed probe up to 32x. */
  HEALTH_PROBE_SECONDS: int(10, 1, 3600, "seconds"),
  /** Consecutive backend faults that eject a backend (HAProxy's `fall` default). */
  EJECT_AFTER_FAULTS: int(3, 1, 100, "faults"),
  /** Consecutive good probes (or post-ejection outcomes) that restore it (HAProxy's `rise` default). */
  RESTORE_AFTER_CHECKS: int(2, 1, 100, "checks"),
  /** At most this share of a pool is ejected at once (at least one backend of two or more). */
  MAX_EJECTION_PERCENT: int(50, 0, 100, "percent"),
  /** Retries may add at most this share of first attempts (Envoy's retry budget default is 20%). */
  RETRY_BUDGET_PERCENT: int(20, 0, 100, "percent"),
  /**
   * A streamed request's response headers must arrive within this: an
   * OpenAI-compatible server (vLLM, SGLang) sends them as soon as it accepts
   * the request, before any queueing or prefill.
   */
  UPSTREAM_CONNECT_TIMEOUT_MS: int(10_000, 100, 600_000, "ms"),
  /**
   * The first event of a streamed response must arrive within this after its
   * headers: queueing plus the prefill of the whole prompt. Non-streamed
   * responses (headers come with the whole answer) are bounded by LEASE_TTL_SECONDS.
   */
  UPSTREAM_FIRST_BYTE_TIMEOUT_MS: int(60_000, 100, 3_600_000, "ms"),
  /**
   * Between two events of a streamed response. A decode step takes tens of
   * ms; a long chunked prefill sharing the batch can stall it for seconds.
   */
  UPSTREAM_IDLE_TIMEOUT_MS: int(20_000, 100, 3_600_000, "ms"),
  /**
   * The RouterDO's answer to a route call must arrive within this, or the
   * Worker decides alone (reason `local`).
   */
  ROUTER_TIMEOUT_MS: int(50, 1, 60_000, "ms"),
  /**
   * Requests in flight per gateway key (a key's `max_concurrent=N` overrides
   * it). Off by default: the right figure depends on the fleet and the number
   * of keys, and each limited request costs a call to the key's KeyLimiterDO.
   */
  KEY_MAX_CONCURRENT: int(0, 0, 10_000, "requests in flight, 0 = no limit"),
  /**
   * With AB_POLICY set: the share of conversations (or tenants) served by arm B,
   * AB_POLICY; the rest by ROUTING_POLICY. An even split compares the arms
   * on equal traffic, the quickest way to a clear difference.
   */
  AB_PERCENT: int(50, 0, 100, "percent of conversations to arm B"),
} as const;

export type SettingName = keyof typeof SETTINGS;

/**
 * How long a request waits for its key's KeyLimiterDO, ms: an object's cold
 * start plus an intercontinental round trip fit; past it the request goes
 * ahead without a slot (and still releases one, in case the grant was only
 * late). Not a var; read by the Worker (key-limiter-client.ts) and the
 * topology model (sim/topology).
 */
export const KEY_LIMITER_DEADLINE_MS = 300;

export const DEFAULT_POLICY = "prefix_aware";

/**
 * KEY_RATE_LIMIT, on | off: requests per period per gateway key through the
 * KEY_RATE_LIMITER binding (its limit and period live on the binding in
 * wrangler.toml). On by default: the binding answers from a local cache, so
 * the guard costs no round trip.
 */
export const DEFAULT_KEY_RATE_LIMIT = "on";

/**
 * AB_POLICY, off | a policy name: arm B of an A/B split against
 * ROUTING_POLICY (arm A). Off by default: a split is an experiment an
 * operator starts, and each arm keeps its own affinity index.
 */
export const DEFAULT_AB_POLICY = "off";

/**
 * AB_STICKY, conversation | tenant: what keeps a request in its arm. A
 * conversation (its first user message, which every later turn repeats)
 * never flips arms; `tenant` keeps a whole tenant key (prompt_cache_key /
 * x-prefix-cache-key) in one arm, and requests without one fall back to
 * their conversation.
 */
export const DEFAULT_AB_STICKY = "conversation";
export const AB_STICKY_MODES = ["conversation", "tenant"] as const;

/**
 * SHADOW, on | off: the RouterDO also decides every request with
 * prefix_aware on its own index, and reports what that would have chosen
 * and captured, without changing which backend serves. Off by default: it
 * doubles the index's memory and the core's work per request (both small).
 */
export const DEFAULT_SHADOW = "off";

/**
 * ROUTER_LOCATION_HINT: where the gateway's Durable Objects (each pool's
 * RouterDO, each key's KeyLimiterDO) are created, as a Cloudflare location
 * hint; "" = none. A hint counts only on an object's first `get`: Durable
 * Objects do not move once created, so it is set before the first request.
 * Empty by default: the right region is the fleet's, which only the operator
 * knows (README "Deploy to Cloudflare"). Without a hint an object starts near
 * the Worker that first asks for it.
 *
 * The hints Cloudflare accepts, as @cloudflare/workers-types lists them
 * (DurableObjectLocationHint; src/worker/location-hint.ts checks the two
 * agree): Western and Eastern North America, South America, Western and
 * Eastern Europe, Asia-Pacific (and its northeast and southeast), Oceania,
 * Africa, the Middle East.
 */
export const LOCATION_HINTS = [
  "wnam",
  "enam",
  "sam",
  "weur",
  "eeur",
  "apac",
  "apac-ne",
  "apac-se",
  "oc",
  "afr",
  "me",
] as const;
export type LocationHint = (typeof LOCATION_HINTS)[number];
export const DEFAULT_ROUTER_LOCATION_HINT = "";

/**
 * `value` if it is within the setting's bounds (and whole, for integer
 * settings); a RangeError naming `label` otherwise. The Worker's config
 * checks the same bounds on the vars (src/worker/config.ts); the Router and
 * outlier detection check what their callers pass them.
 */
export function checkSetting(name: SettingName, value: number, label: string = name): number {
  const s: NumericSetting = SETTINGS[name];
  if (!(value >= s.min && value <= s.max) || (s.integer && !Number.isInteger(value)))
    throw new RangeError(
      `${label}: must be ${s.integer ? "an integer" : "a number"} within ${s.min}..${s.max} (${s.unit}), got ${value}`,
    );
  return value;
}

/** The default of a setting as wrangler.toml's [vars] writes it. */
export function defaultVar(name: SettingName): string {
  return String(SETTINGS[name].default);
}
