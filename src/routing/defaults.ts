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
   * headers: queueing plus the prefill of the whole prompt. Past it the wait goes
   * on, window after window, while the backend is seen answering other
   * requests — streams this isolate relays, or, asked ROUTER_TIMEOUT_MS before
   * the deadline, requests any isolate saw finish there or long answers any
   * isolate is relaying from it (the RouterDO's progress(); relay notices, at
   * most one per backend per isolate per quarter window, capped at 15 s:
   * router-client.ts noticeRelay) — busy, not hung (src/worker/inference/backend-progress.ts), up
   * to LEASE_TTL_SECONDS, which bounds non-streamed responses too.
   */
  UPSTREAM_FIRST_BYTE_TIMEOUT_MS: int(60_000, 100, 3_600_000, "ms"),
  /**
   * Between two events of a streamed response. A decode step takes tens of
   * ms; a long chunked prefill sharing the batch can stall it for seconds.
   */
  UPSTREAM_IDLE_TIMEOUT_MS: int(20_000, 100, 3_600_000, "ms"),
  /**
   * The longest a streamed answer may wait on its client to take the bytes already handed to it (a write stall:
   * the relay's last chunk is not yet taken, so the backend's next is not read), after which the relay cuts the
   * backend's fetch and ends the lease as the client's doing (relay.ts). Without it an unread stream held its
   * backend's in-flight slot until LEASE_TTL_SECONDS (600 s). Not the backend's idle time: a backend with
   * nothing to send leaves the relay waiting on a read, which this never counts. 60 s is nginx's `send_timeout`
   * (the same bound, between two successive writes to the client) and outlasts a mobile link's outage through
   * five doublings of TCP's retransmission timeout (1+2+4+8+16 = 31 s); a client reading steadily, however
   * slowly (1 KB/s takes a token's event in a fraction of a second), never comes near it.
   */
  CLIENT_STALL_TIMEOUT_MS: int(60_000, 100, 3_600_000, "ms"),
  /**
   * The whole request body must arrive within this (408 request_timeout after it), however its pieces are
   * spaced: the 30 s between pieces (BODY_IDLE_MS) alone let a body trickled a byte every 29 s hold the
   * request for ever (no key slot: that is taken once the body is whole). 300 s is Node's http.Server
   * `requestTimeout`, the same bound (a whole request, then 408); a 16 MiB body (MAX_BODY_BYTES) still
   * arrives at 0.5 Mbit/s.
   */
  REQUEST_BODY_TIMEOUT_MS: int(300_000, 1000, 3_600_000, "ms"),
  /**
   * The RouterDO's answer to a route call must arrive within this, or the
   * Worker decides alone (reason `local`).
   */
  ROUTER_TIMEOUT_MS: int(50, 1, 60_000, "ms"),
  /**
   * How long a finished request's report (which ends its lease) waits in
   * its isolate for a route call to the same RouterDO to carry it, before
   * the isolate sends it alone. Under traffic the next route call carries
   * it: one call per request instead of two, for the object (whose ~1,000
   * calls/s bound a cell) and for the Worker (bench/results/scale.md "The
   * route call"). The price: where no route call follows, a finished request
   * still counts as in flight for up to this long, small against a
   * request's own seconds. 0 = every report sent at once, alone.
   */
  REPORT_CARRY_MS: int(20, 0, 1000, "ms, 0 = sent at once"),
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
  /**
   * Every this many ms, while the pool is routing, the RouterDO reads each
   * backend's Prometheus /metrics (vLLM's or SGLang's running and waiting
   * requests, KV use), so the cost model sees load this gateway did not
   * place: other clients, other gateways. 0 = off, the default: each scrape
   * round is an alarm invocation (a billed Durable Object request) and one
   * subrequest per backend, worth paying only where such load exists.
   * Otherwise 100 ms at least (ENGINE_SCRAPE_MIN_MS).
   */
  ENGINE_SCRAPE_MS: int(0, 0, 60_000, "ms, 0 = off"),
  /**
   * Requests in flight per backend, across every isolate (a backend's own
   * `maxInflight` in BACKENDS overrides it). A backend at its bound takes no
   * new request while another has room; when every usable backend is at its
   * bound the request is shed at once with a 429 and a retry-after, instead of
   * queueing without end in some engine (Envoy's `max_requests`, nginx's
   * `max_conns`). Off by default: the right figure is the engine's batch
   * (vLLM's `--max-num-seqs`) plus the queue its clients can wait through,
   * which only the operator knows (bench/results/red-team.md "Load shedding").
   */
  MAX_INFLIGHT_PER_BACKEND: int(0, 0, 100_000, "requests in flight per backend, 0 = no bound"),
  /**
   * When MAX_INFLIGHT_PER_BACKEND binds: the share of a cell's slots kept
   * free, while more than one gateway key contends for them, for the keys
   * below their fair share (slots / contending keys), rounded up to whole
   * slots (src/routing/key-share.ts). A key alone may take every slot; a key
   * above its share is shed before it takes the last of these, so a key
   * holding nothing is served at once instead of meeting the 429s another
   * key's flood earns (bench/results/red-team.md "key-share"). 10: one slot
   * of a 10-slot cell, 7 of 64, which a flooding key gives up only while
   * another key asked within the last minute. 0 = off: the first come take
   * every slot, as before. Nothing is counted while the bound is off.
   */
  KEY_SHARE_HEADROOM_PERCENT: int(10, 0, 50, "percent of a cell's slots, 0 = off"),
  /**
   * Every this many seconds, while the pool routes, the RouterDO asks each
   * backend's `GET /v1/models` (and once at once when a backend joins the
   * pool or moves): reachable? which HTTP status? does the list hold the
   * pool's model? It tells the operator (a warning log line per change of
   * state, /healthz, the dashboard) about a backend url with a path prefix the
   * server does not serve, or a server started with another model name,
   * before clients meet its 404. Report only: it never takes a backend out
   * of routing (bench/results/red-team.md "Backend check"). 5 minutes: one
   * subrequest per backend and an alarm per pool per 5 minutes of traffic is
   * noise against the traffic itself; a fleet change is checked at once
   * whatever the interval. 0 = off; otherwise at least BACKEND_CHECK_MIN_SECONDS.
   */
  BACKEND_CHECK_SECONDS: int(300, 0, 86_400, "seconds, 0 = off"),
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

/**
 * How long a key's in-flight slot lives unless renewed, ms. The Worker that
 * relays the response renews it every KEY_SLOT_RENEW_MS while the body
 * flows (src/worker/key-limits/slot-renewal.ts), so this bounds only how
 * long a holder that died (a deploy, a crash) keeps a capped key's slot:
 * half a minute instead of LEASE_TTL_SECONDS. Shorter costs more renewal
 * calls per key; 30 s keeps that at 6 per key per minute per isolate. Not a
 * var; not derived from any benchmark.
 */
export const KEY_SLOT_TTL_MS = 30_000;
/**
 * A third of the TTL: a slot is named in a renewal at least every two
 * periods (slot-renewal.ts), so one lost or late renewal still leaves it a
 * period (10 s, far above KEY_LIMITER_DEADLINE_MS) before it lapses.
 */
export const KEY_SLOT_RENEW_MS = KEY_SLOT_TTL_MS / 3;
/** The shortest interval BACKEND_CHECK_SECONDS takes when on: each round is an alarm and a subrequest per backend. */
export const BACKEND_CHECK_MIN_SECONDS = 10;
/** The shortest scrape interval ENGINE_SCRAPE_MS takes when on: a scrape round is an alarm and a subrequest per backend. */
export const ENGINE_SCRAPE_MIN_MS = 100;

/**
 * An engine reading older than this many scrape intervals is not used (the
 * policy ignores it, the RouterDO forgets it): it outlives two failed
 * scrapes in a row, never a dead scraper.
 */
export const ENGINE_SIGNAL_MAX_AGE_INTERVALS = 3;

/** The age past which an engine reading taken every `scrapeMs` is stale. */
export function engineSignalMaxAgeMs(scrapeMs: number): number {
  return ENGINE_SIGNAL_MAX_AGE_INTERVALS * scrapeMs;
}

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
 * PREFIX_SCOPE, shared | key: who shares prefix affinity. `shared`: every
 * client whose prompt (and tenant key) matches, across gateway keys, as the
 * gateway always did: the keys of one organisation keep each other's hits.
 * `key`: the prefix hashes are seeded by the gateway key's id as well, and
 * backends marked `cacheSalt` get a per-scope vLLM `cache_salt`, so no key can
 * learn whether another sent a prompt (README "Tenant isolation"). Shared by
 * default: `key` costs every hit that crosses keys, which an operator whose
 * keys are one organisation's teams would lose for nothing on upgrade.
 */
export const DEFAULT_PREFIX_SCOPE = "shared";
export const PREFIX_SCOPES = ["shared", "key"] as const;

/**
 * SHADOW, on | off: the RouterDO also decides every request with
 * prefix_aware on its own index, and reports what that would have chosen
 * and captured, without changing which backend serves. Off by default: it
 * doubles the index's memory and the core's work per request (both small).
 */
export const DEFAULT_SHADOW = "off";

/**
 * ROUTER_CELLS, auto | 1..ROUTER_CELLS_MAX: how many RouterDO cells serve
 * each model pool (cells.ts). auto: the fewest that keep every cell within
 * CELL_MAX_BACKENDS backends and CELL_INDEX_BUDGET_BYTES of affinity index,
 * so a pool of up to 16 backends stays one RouterDO, as it always was. A
 * number is clamped to the pool's backend count.
 */
export const DEFAULT_ROUTER_CELLS = "auto";
export const ROUTER_CELLS_MAX = 256;

/**
 * Most backends one cell serves under ROUTER_CELLS=auto: the throughput rule.
 * Cloudflare documents a soft limit of about 1,000 requests/s per Durable
 * Object, and each request costs its cell two calls (route, complete): 500
 * requests/s per cell, i.e. 16 backends at up to ~31 requests/s each — above
 * what one GPU replica serves at chat sizes (the simulator's busy 8-backend
 * fleets run 5–13 requests/s per backend), with room for retries and the
 * admin's reads.
 */
export const CELL_MAX_BACKENDS = 16;

/**
 * Bytes of affinity index (every A/B arm's and the shadow's) one cell may
 * hold under ROUTER_CELLS=auto: the memory rule. A Durable Object's isolate
 * has 128 MB, which also holds the bundle's compiled code, the runtime's
 * own heap, leases and the garbage collector's headroom; Cloudflare may run
 * several objects of one class in one isolate, so two cells must fit side
 * by side. 40 MiB each leaves 48 MB for everything else
 * (bench/results/scale.md, "Memory").
 */
export const CELL_INDEX_BUDGET_BYTES = 40 * 2 ** 20;

/**
 * Bytes one kept key costs in an affinity index when full, for planning:
 * a 32-byte node record plus its share of the power-of-two bucket array (4
 * to 8 bytes). Measured with the V8 heap at 37.2 bytes per key for 1 M keys,
 * where the budget binds (bench/results/index-memory.md).
 */
export const INDEX_BYTES_PER_KEY = 40;

/**
 * How long a cell's load figure, learnt from a route response, stands for
 * the cell's load in the Worker's choice of cell (cell-ring.ts). A figure
 * older than this is no evidence: the cell counts as under its cap.
 */
export const CELL_LOAD_TTL_MS = 1000;

/**
 * How long a cell whose RouterDO answered that it has no usable backend
 * (every one drained, ejected or failing: RouteResult no_usable) is passed over by
 * the Worker's choice of cell (cell-chooser.ts), unless every cell is. Its
 * families go to the next cell in their probe order meanwhile; after this
 * the next request of one of them asks its home again (one route call, no
 * lease when the answer is the same), so they return within about this long
 * of the RouterDO's health probe restoring a backend. A second, as the
 * route-call breaker (ROUTER_BACKOFF_MS): one wasted call per isolate per
 * second against a whole cell's requests failing.
 */
export const CELL_UNUSABLE_MS = 1000;

/**
 * The cell choice's memory of prefix families (cell-chooser.ts), per pool
 * and Worker isolate: a family is the requests that share a prefix up to
 * some depth (first the leading 64 tokens).
 * - CELL_FAMILY_MEMORY: families remembered (least recently seen forgotten
 *   first; a forgotten family starts again at its ring home). ~0.7 KB each.
 * - CELL_RATE_HALF_LIFE_MS: half-life of the request counts that give a
 *   family's share of the pool's traffic.
 * - CELL_SPLIT_SHARE / CELL_JOIN_SHARE: a family whose share reaches
 *   CELL_SPLIT_SHARE × 1/K (it alone would fill a cell) is split where its
 *   requests diverge; it is kept whole again below CELL_JOIN_SHARE × 1/K
 *   (hysteresis: no flapping at the threshold).
 * - CELL_MIN_EVIDENCE: requests (decayed count) the isolate must have seen
 *   before a family's share, as a plain ratio, splits or joins it.
 * - CELL_SHARE_Z: standard errors of the confidence bound (share-bounds.ts)
 *   that splits a family sooner, from fewer requests, when even the low end
 *   of its share fills a cell (and joins it when even the high end is well
 *   below): 2, the usual ~95%. It exists for isolates that see a small part
 *   of a pool's traffic, where CELL_MIN_EVIDENCE requests take long to come
 *   (eight isolates: Mooncake's shared system prompt was sent whole to one
 *   cell for each isolate's first 64 requests, its busiest cell at 1.5–4 ×
 *   the mean; bench/results/scale.md, "Cells").
 */
export const CELL_FAMILY_MEMORY = 2048;
export const CELL_RATE_HALF_LIFE_MS = 10_000;
export const CELL_SPLIT_SHARE = 0.5;
export const CELL_JOIN_SHARE = 0.25;
export const CELL_MIN_EVIDENCE = 64;
export const CELL_SHARE_Z = 2;

/**
 * The cell bound a continuing split-off family is held to (cell-chooser.ts):
 * a family below the first level (a conversation of a split system prompt)
 * that this isolate has placed before stays in its ring home until the home
 * holds CELL_KEEP_FACTOR × its share, where new families and whole families
 * leave it at the pool's balance factor c (1.25 by default). Moving a
 * conversation costs its whole history in the new cell; spilling a new one
 * costs nothing past the shared prefix every cell already holds, so the
 * cells shed load with the cheap moves first (Preble, Srivatsa et al. 2024,
 * trades cached-prefix length against load the same way across GPUs). With
 * c above it, c holds. Chosen on the tuning set (both seeds) among 1.5,
 * 1.75, 2, 3 and no second bound (bench/results/scale.md, "Cells"): the
 * largest that keeps every tuning run's busiest cell about where it was
 * (≤ 1.22 × the mean, 1.21 before; 1.75 reached 1.29 and 2 1.31 on multi-turn's second
 * seed at K = 8, at and past issue 13's 1.3).
 */
export const CELL_KEEP_FACTOR = 1.5;

/**
 * Conversations a cell relays to the Worker isolates (cell-families.ts):
 * every route response of a pool with K > 1 cells carries the keys of the
 * last CELL_RELAY_FAMILIES families that callers newly placed in the cell,
 * 8 bytes each, so that every isolate counts a conversation as continuing
 * (CELL_KEEP_FACTOR) once any isolate placed it. Each isolate keeps what it
 * is told in a set of at most CELL_FAMILY_MEMORY keys.
 */
export const CELL_RELAY_FAMILIES = 8;

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
 * CORS_ALLOW_ORIGINS: browser origins that may call the client API
 * (src/worker/cors/); "" = off, so a gateway that never set it answers
 * exactly as before. Only the operator knows which pages should hold keys.
 */
export const DEFAULT_CORS_ALLOW_ORIGINS = "";
/**
 * How long a browser may reuse a preflight's answer, s: Chromium's cap
 * (7200; Firefox takes up to 86400). A removed origin loses access at once
 * anyway: each answer's own Allow-Origin is checked, not only the preflight.
 */
export const CORS_MAX_AGE_SECONDS = 7200;

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

/** Lease ends one call carries at most (a route call, or one batch of a flush): bounds the payload and the object's work per call. */
export const CARRIED_COMPLETES_MAX = 64;

/**
 * Ids of leases an earlier RouterDO instance granted that this instance has ended (re-announced
 * ones, or ends reported for leases it never saw), remembered so that a second report of the same
 * end (a carried report sent again after a timeout) is not counted twice. Such leases are the
 * ones open when the object was evicted or restarted (a deploy restarts it under load): this many
 * ids (~40 bytes each) covers a deploy in the middle of thousands of open streams.
 */
export const FOREIGN_LEASES_REMEMBERED = 8192;

/**
 * A RouterDO's /admin/stats counters and latency sketches are written to its storage at most this
 * often, by its alarm, when they changed (never by a route call itself): an object is evicted after
 * ~10 s without calls (a hibernatable one; Cloudflare, "Lifecycle of a Durable Object"), so the last
 * figures are saved before that, and a restart (a deploy, a crash) loses at most this much of them.
 * One write per this long: each holds the object's responses of that moment until it is confirmed.
 */
export const STATS_SAVE_MS = 5000;
