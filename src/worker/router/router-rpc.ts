/**
 * The RPC contract between the Worker and a RouterDO (types only; the object
 * in durable-objects/router-do.ts implements it and imports it from here, so
 * the dependency runs one way). Plain data only (RPC drops error classes),
 * every method returns a result union. Nothing here
 * carries a secret: backends travel with their url (the DO probes /health)
 * but never with their apiKey (the DO reads a backend's key from its own
 * BACKENDS, for its probes and scrapes: config.ts backendsById).
 *
 * Shard-agnostic: a RouterDO decides over the traffic it is given and never
 * assumes it sees all of a pool's requests; the Worker chooses the object
 * (one per cell of the pool: pool-cells.ts), and sends it the spec of its
 * cell's backends only.
 */
import type { ProbationRow, RouterStats } from "../../routing";
import type { PolicyName, RoutedCount, RouteReason } from "../../routing/types";
import type { BackendCheck } from "../backend-check/models-check";
import type { ArmLabel, PoolSnapshot } from "../stats/pool-snapshot";

/** A backend as the DO knows it. */
export interface FleetBackend {
  readonly id: string;
  readonly url: string;
  readonly weight: number;
  readonly kvCacheTokens: number;
  /** Its own bound on requests in flight (BACKENDS maxInflight), overriding maxInflightPerBackend; absent: the pool's. */
  readonly maxInflight?: number;
}

/**
 * The settings a pool's RouterDO routes with, as the Worker's config
 * validated them (the vars of the same names; no secrets). Part of the
 * fleet version. pool-settings.ts turns them into the routing core's
 * RouterOptions.
 */
export interface RouterSettings {
  readonly policy: PolicyName;
  readonly blockTokens: number;
  readonly balanceFactor: number;
  readonly leaseTtlSeconds: number;
  readonly healthProbeSeconds: number;
  /** Consecutive backend faults that eject a backend (HAProxy's `fall`). */
  readonly ejectAfterFaults: number;
  /** Consecutive good checks that restore an ejected backend (HAProxy's `rise`). */
  readonly restoreAfterChecks: number;
  /** Largest share of the pool ejected at once, percent. */
  readonly maxEjectionPercent: number;
  /** Retries allowed, as a percentage of first attempts. */
  readonly retryBudgetPercent: number;
  /** Arm B's policy of an A/B split against `policy` (arm A); null: no split. */
  readonly abPolicy: PolicyName | null;
  /** Percent of arm keys served by arm B. */
  readonly abPercent: number;
  /** The RouterDO also decides each request with prefix_aware, for the record only. */
  readonly shadow: boolean;
  /** The RouterDO reads each backend's /metrics every this many ms while it routes; 0 = off. */
  readonly engineScrapeMs: number;
  /** MAX_INFLIGHT_PER_BACKEND: requests in flight per backend before one is shed (src/routing/inflight-bound.ts); 0 = off. */
  readonly maxInflightPerBackend: number;
  /**
   * KEY_SHARE_HEADROOM_PERCENT: while the bound binds and more than one key contends, the share of the cell's
   * slots kept free for keys below their fair share (src/routing/key-share.ts); 0 = off.
   */
  readonly keyShareHeadroomPercent: number;
  /** The RouterDO asks each backend's /v1/models every this many seconds while it routes; 0 = off. */
  readonly backendCheckSeconds: number;
}

/** A pool's whole routing configuration; its hash is the fleet version. */
export interface PoolSpec extends RouterSettings {
  readonly backends: readonly FleetBackend[];
  /** The model the pool serves, which the backend check looks for in each /v1/models (absent: not looked for). */
  readonly model?: string;
}

/**
 * Why an attempt ended badly. Backend faults (count toward ejection):
 * connect_error, timeout, server_error (502/503/504; a 503 with a retry-after is throttled), stream_error (cut
 * mid-way). Judged later: http_500, http_404 and http_403 (a fault only if the retry elsewhere
 * succeeds: a 404 from one backend while another serves the request is a model it does not serve; a 403 is a
 * proxy refusing the gateway's key, or a firewall refusing the request's content). Not the backend's fault: throttled (a 429, or a 503 with a
 * retry-after: routed around for its retry-after), client_abort, request_error (4xx, or a 500 the request got
 * everywhere), unused (a lease whose decision arrived after the Worker had
 * decided without it).
 */
export type FailureKind =
  | "connect_error"
  | "timeout"
  | "server_error"
  | "stream_error"
  | "http_500"
  | "http_404"
  | "http_403"
  | "throttled"
  | "client_abort"
  | "request_error"
  | "unused";

export interface RouteInput {
  /** Hash of the PoolSpec the Worker holds. */
  readonly fleetVersion: string;
  /**
   * A first attempt the Worker will ask another cell of the pool for if this one is full or has no backend in
   * rotation: an at_capacity answer does not count it shed (usage.shed counts requests the client is refused;
   * the last cell asked counts it), and a cell none of whose backends can serve (each drained, ejected, or past
   * EJECT_AFTER_FAULTS consecutive faults: PoolRouter.anyUsable) answers no_usable instead of routing onto them (the Worker's cell chooser then passes the cell over for a while).
   */
  readonly movable?: true;
  /**
   * A retry whose first attempt's cell spent the retry budget on it and then could not place it (it answered
   * the movable retry no_usable): this cell routes it as a first attempt but deposits nothing in its budget
   * (the retry is not a new request), and, when it is the first cell asked again, avoids `avoid` (the backend the
   * last attempt failed on) and `tried` (those earlier attempts failed on: a busy retry's first backend), as
   * RouteInput.retryOf.tried does in one RouterDO. A RouterDO of the previous version reads `avoid` only.
   */
  readonly movedRetry?: { readonly avoid?: string; readonly tried?: readonly string[] };
  /** Sent when the Worker is not sure the DO has this version (saves a round trip). */
  readonly spec?: PoolSpec;
  readonly blocks: readonly number[];
  readonly promptTokens: number;
  readonly outputTokens?: number;
  /** The whole prompt's key when it has no full block (RouteRequest.promptKey). */
  readonly promptKey?: number;
  /** A /v1/completions batch's prompt count, when more than one (RouteRequest.prompts). */
  readonly prompts?: number;
  /** Of promptTokens, what the estimate cannot vouch for, when more than 0 (RouteRequest.unconfirmedTokens). */
  readonly unconfirmedTokens?: number;
  /** Which A/B arm serves the request: a hash of its conversation or tenant (a uint32), so it never flips. */
  readonly armKey?: number;
  /**
   * The client's gateway key by its id (GatewayKey.id: 16 hex digits of its SHA-256, never the key): the
   * retry budget gives each key a share of its own (src/routing/retry-budget.ts KeyedRetryBudget).
   */
  readonly clientKey?: string;
  /**
   * With K > 1 cells: which cell this RouterDO is (0-based), and the calling isolate's figures of every
   * cell's load (src/routing/cell-loads.ts, [inflight, ageMs] per cell). The object keeps the freshest
   * it is told of each and answers with them (RouteResult.cellLoads). Absent with one cell.
   * `placed`: the key of the split-off family this request starts in this cell, when the calling
   * isolate had not placed it before (src/routing/cell-families.ts): the cell relays it to every
   * isolate (RouteResult.cellFamilies). 8 bytes, on the first turn a given isolate sees.
   */
  readonly cellLoads?: {
    readonly cell: number;
    readonly figures: readonly number[];
    readonly placed?: number;
  };
  /**
   * Re-route after `leaseId`'s backend failed before sending a byte: ends that
   * lease with `failure` (and `retryAfterMs` for a 429) and, if the pool's
   * retry budget allows, routes again; the failed backend is not chosen
   * unless it is the only one left.
   */
  readonly retryOf?: {
    readonly leaseId: string;
    readonly failure: FailureKind;
    readonly retryAfterMs?: number;
    /**
     * Backends the request's earlier attempts failed on (a retry that met a busy backend moves on again:
     * attempts.ts): left out of this decision as the failed one is. At most a few ids.
     */
    readonly tried?: readonly string[];
    /** The failed lease as the Worker holds it (for an instance that does not know it). */
    readonly held?: HeldLease;
  };
  /**
   * Leases this isolate saw end since its last call to this object (at most
   * CARRIED_COMPLETES_MAX, complete-carry.ts): ended, as complete() ends
   * them, before the decision is taken. An unknown or ended lease is skipped.
   */
  readonly completes?: readonly CarriedComplete[];
  /**
   * Backends this isolate relayed answer bytes from since its last notice to this object (relay-notices.ts,
   * rate-limited per backend): heard as progress() evidence before the decision. No routing input.
   */
  readonly relaying?: readonly RelayNotice[];
}

/**
 * An isolate relayed answer bytes (events of a 2xx answer streaming for a while) from backend `id`, `ageMs` before
 * the notice was sent: that engine is producing output, whether or not any of its requests ends soon
 * (progress()). Ages, not times: the two clocks need not agree.
 */
export interface RelayNotice {
  readonly id: string;
  readonly ageMs: number;
}

/** relaying(): how many of the notices were kept (the others named no backend of the pool, or were malformed). */
export interface RelayingResult {
  readonly ok: true;
  readonly kept: number;
}

/**
 * firstToken(): whether the lease was open here and its router told (false: unknown, already ended, or a lease an
 * earlier instance granted, whose prefill this instance never predicted).
 */
export interface FirstTokenResult {
  readonly ok: true;
  readonly heard: boolean;
}

export type RouteResult =
  | {
      readonly ok: true;
      readonly backendId: string;
      readonly leaseId: string;
      readonly reason: RouteReason;
      readonly expectedCachedTokens: number;
      /** The longest prefix any usable backend held (reuse available), prompt tokens. */
      readonly availableCachedTokens: number;
      readonly inflightAtDecision: number;
      /** The request as routing counted it, when not as sent (RouteDecision.routed): the log says both. */
      readonly routed?: RoutedCount;
      readonly policy: PolicyName;
      /** The A/B arm that decided ("a" without a split). */
      readonly arm: ArmLabel;
      /** What the shadow (prefix_aware) would have chosen and expected cached, when SHADOW is on. */
      readonly shadow?: { readonly backendId: string; readonly expectedCachedTokens: number };
      /** Backends out of rotation right now, ejected or drained (absent when none): the Worker's view for local decisions. */
      readonly ejected?: readonly string[];
      /**
       * Backends on probation right now (back while they have relapses: HealthTracker.onProbation; absent when
       * none): the Worker's local decisions hold one out on its first fault, as the RouterDO would.
       */
      readonly probation?: readonly ProbationRow[];
      /**
       * Requests in flight in this RouterDO (leases, this one included): the load figure the Worker's
       * choice of cell bounds (src/routing/cell-ring.ts). Absent from an object deployed before cells.
       */
      readonly cellInflight?: number;
      /**
       * Every cell's load as this cell knows it (its own exact, the others as callers relayed them;
       * [inflight, ageMs] per cell): sent back when the call carried RouteInput.cellLoads.
       */
      readonly cellLoads?: readonly number[];
      /**
       * The keys of the last families callers newly placed in this cell, at most CELL_RELAY_FAMILIES
       * (8 × 8 bytes): every isolate then holds a conversation any isolate placed to CELL_KEEP_FACTOR
       * (src/routing/cell-families.ts). Sent back when the call carried RouteInput.cellLoads.
       */
      readonly cellFamilies?: readonly number[];
      /**
       * Which instance of the RouterDO answered (a random id drawn when the object starts): a caller
       * that held leases of another instance re-announces them (reopen()), since an evicted or
       * restarted object forgot them. Absent from an object deployed before it.
       */
      readonly instance?: string;
    }
  | {
      readonly ok: false;
      /**
       * fleet_stale: call again with `spec`. retry_budget_exhausted: a retry was
       * refused (the failed lease is ended all the same). no_backends: the pool is empty.
       * no_usable: a movable first attempt (RouteInput.movable) and no backend of this cell can serve (each
       * drained, ejected or failing: PoolRouter.anyUsable); no lease, nothing counted: the Worker asks another cell.
       * Also to a movable retry (retryOf with movable) that no backend of this cell but the failed one can take
       * unsuspected (PoolRouter.fitForRetry): the failed lease is ended and the retry budget spent, as for any
       * granted retry, and the Worker asks another cell with RouteInput.movedRetry.
       * nowhere_else: a retry moving on from a busy backend (retryOf.tried), not movable, and no backend here can
       * serve but those the request's attempts met: the failed lease is ended, no budget is spent, and the busy
       * backend's answer is the client's.
       */
      readonly code: "fleet_stale" | "retry_budget_exhausted" | "no_backends" | "no_usable" | "nowhere_else";
      readonly message: string;
    }
  | {
      readonly ok: false;
      /**
       * Every usable backend of the cell is at its bound on requests in flight (maxInflightPerBackend, a
       * backend's maxInflight): the request is shed, not routed; no lease, no retry budget spent.
       */
      readonly code: "at_capacity";
      readonly message: string;
      /** When a slot is likely free again, ms (inflight-bound.ts LeaseEndClock), within MAX_THROTTLE_MS. */
      readonly retryAfterMs: number;
      /**
       * Present when the cell has room but not for this key: it holds `held` of the cell's slots, at or above
       * its fair share `share`, while other keys contend (src/routing/key-share.ts). The cell is not full for
       * other keys' requests.
       */
      readonly overShare?: { readonly held: number; readonly share: number };
    };

export interface CompleteInput {
  /** The backend produced a response (any tokens). */
  readonly ok: boolean;
  /** HTTP status the backend answered with, if it answered. */
  readonly status?: number;
  readonly failure?: FailureKind;
  readonly promptTokens?: number;
  readonly cachedTokens?: number;
  readonly ttftMs?: number;
  /**
   * With failure `throttled`: how long the backend asked to be left alone (its retry-after, as read when
   * its headers came: Attempt.retryAfterMs), ms; the RouterDO counts it from when the report arrives.
   */
  readonly retryAfterMs?: number;
  /** usage.completion_tokens as the backend reported it. */
  readonly outputTokens?: number;
  /** Gateway received the request → last byte, ms (end-to-end latency). */
  readonly durationMs?: number;
  /**
   * The 2xx answer carried an error object (vLLM's mid-stream error event, a JSON error body): a failed
   * request in the counters, no fault of the backend (whose fault is unknown), and `ok` stays what the
   * backend computed (tokens came: the prefix is cached there), so routing learns as from any answer.
   */
  readonly backendError?: true;
  /**
   * A /v1/completions batch of more than one prompt: its usage is the engine's sum over the prompts
   * (vLLM adds every prompt's tokens) and its TTFT the first prompt's. Counted as reported; the router
   * learns nothing per request from it (outcomes.ts toRouteOutcome).
   */
  readonly batch?: true;
  /**
   * Set by the RouterDO, never sent by the Worker: the attempt failed and the Worker's retry elsewhere was
   * granted, so the client's request lives on in the retry; the arms and the pool's usage count it as
   * retried, not failed.
   */
  readonly retried?: true;
}

/** A request the Worker routed by itself (the RouterDO was unreachable), reported afterwards. */
export interface ObserveInput {
  readonly fleetVersion: string;
  readonly backendId: string;
  readonly blocks: readonly number[];
  readonly promptTokens: number;
  /** A /v1/completions batch's prompt count, when more than one (RouteRequest.prompts). */
  readonly prompts?: number;
  /** Of promptTokens, what the estimate cannot vouch for, when more than 0 (RouteRequest.unconfirmedTokens). */
  readonly unconfirmedTokens?: number;
  /** Epoch ms of the Worker's decision. */
  readonly routedAt: number;
  readonly outcome: CompleteInput;
}

export type ObserveResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: "fleet_stale" | "unknown_backend"; readonly message: string };

/**
 * A lease as the Worker that holds its stream knows it: enough for a RouterDO instance that never
 * saw it (the one that granted it was evicted) to count it in flight again (reopen()) or to apply
 * its end to the backend's health and the counters (complete()).
 */
export interface HeldLease {
  readonly backendId: string;
  /** The instance that granted it (RouteResult.instance). */
  readonly instance: string;
  readonly arm: ArmLabel;
  /** How long before this was sent the lease was granted, by the Worker's clock (ms): no clock skew. */
  readonly ageMs: number;
}

/** A lease the Worker still holds open, re-announced to a new instance of its RouterDO. */
export interface ReopenedLease {
  readonly leaseId: string;
  readonly held: HeldLease;
  /**
   * The gateway key it serves (RouteInput.clientKey, a key id: 16 hex digits), when its route call carried one:
   * the new instance counts the lease toward that key's share (key-share.ts), as the instance that granted it did.
   * Absent from a Worker deployed before it, or anything but a key id: counted under no key, as before.
   */
  readonly key?: string;
}

/** What reopen() did: leases counted in flight again (the others were known, ended, expired or on departed backends). */
export interface ReopenResult {
  readonly ok: true;
  readonly reopened: number;
}

/** One lease's end, carried on a route call or sent in a batch (complete-carry.ts). */
export interface CarriedComplete {
  readonly leaseId: string;
  readonly outcome: CompleteInput;
  /** The lease as the Worker holds it (absent from a Worker deployed before it). */
  readonly held?: HeldLease;
}

/** What completeAll() ended: leases that were open (the others were unknown or already ended). */
export interface CompleteAllResult {
  readonly ok: true;
  readonly ended: number;
}

/**
 * How long ago a backend of the cell was last seen producing output, as the RouterDO heard it from every
 * isolate: a request there finished with an answer (a lease ended, or a local decision observed, with `ok`:
 * tokens came), or an isolate said it was relaying its answer bytes (relaying(), a RelayNotice) — the
 * evidence that a backend is busy, not hung, when the asking isolate relayed nothing from it lately
 * (src/worker/inference/backend-progress.ts). An age, not a time: the two clocks need not agree.
 */
export interface BackendProgress {
  readonly id: string;
  /** Ms between the freshest such evidence and this answer, by the RouterDO's clock. */
  readonly ageMs: number;
}

/**
 * progress(): read-only, every backend of the cell with known output (none before the first, nor after the
 * object restarted: it keeps them in memory).
 */
export interface ProgressResult {
  readonly ok: true;
  readonly backends: readonly BackendProgress[];
}

export type CompleteResult =
  | { readonly ok: true; readonly backendId: string }
  | { readonly ok: false; readonly code: "unknown_lease"; readonly message: string };

export interface BackendStatus {
  readonly id: string;
  /** In rotation (not ejected). */
  readonly healthy: boolean;
  readonly inflight: number;
  /** When ejected (or watched: a cell's failing last backend): epoch ms of the next /health probe. */
  readonly nextProbeAt?: number;
  /** Consecutive backend faults. */
  readonly consecutiveFailures: number;
  /**
   * Times in a row it failed again soon after its probes brought it back (absent when none): its next probe
   * waits the probe interval doubled this many times (capped at 32×). A /health that says 200 while its
   * requests fail does this.
   */
  readonly relapses?: number;
  /**
   * On probation (back while it has relapses): good requests it still owes; until then its first fault holds it
   * out again (absent when none).
   */
  readonly probation?: number;
  /** Epoch ms until which a 429 keeps it out of decisions, while others can serve. */
  readonly throttledUntil?: number;
}

/** What backends reported back through complete(), since the counters were first kept (README "/admin/stats"). */
export interface UsageTotals {
  /** Requests a backend answered (an error inside a 2xx is `failed`). */
  readonly completed: number;
  /**
   * Requests that ended without an answer, client aborts included (the arms leave those out). Requests,
   * not attempts: an attempt that failed and whose retry was granted is in `retried`, as in the arms.
   */
  readonly failed: number;
  readonly expired: number;
  /** Completions that carried usage (prompt_tokens_details.cached_tokens). */
  readonly withUsage: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  /**
   * usage.completion_tokens of successful completions, as handed to the routing core (RouteOutcome
   * outputTokens: the answer's blocks it charges to the backend's index).
   */
  readonly outputTokens: number;
  /** Retries routed / refused by the retry budget. */
  readonly retried: number;
  readonly retriesRefused: number;
  /** Ejections and restorations by outlier detection. */
  readonly ejections: number;
  readonly restorations: number;
  /** Outcomes of decisions the Worker made alone, reported through observe(). */
  readonly observed: number;
  /** Requests shed (at_capacity): every usable backend was at its bound on requests in flight. */
  readonly shed: number;
}

/** What the RouterDO's scrape of its backends' /metrics has been doing. */
export interface EngineScrapeStatus {
  readonly intervalMs: number;
  /** Backends with a reading fresh enough to route on. */
  readonly readings: number;
  /** Scrape rounds finished, and scrapes that failed, since the object started. */
  readonly rounds: number;
  /** How long the latest finished round took, ms. */
  readonly lastRoundMs?: number;
  readonly failures: number;
  /** Backends whose latest scrape failed: why, and when (epoch ms). A success clears the entry. */
  readonly failing: Readonly<Record<string, { readonly reason: string; readonly at: number }>>;
}

/** What the RouterDO's check of its backends' /v1/models found (BACKEND_CHECK_SECONDS), when on. */
export interface BackendCheckStatus {
  readonly intervalSeconds: number;
  /** Check rounds finished since this instance started. */
  readonly rounds: number;
  /** Each backend's latest check (none yet: not listed). */
  readonly backends: Readonly<Record<string, BackendCheck>>;
}

export type StatsResult =
  | {
      readonly ok: true;
      /**
       * Epoch ms this instance of the RouterDO started. `leases`, `backends[].inflight`, `router` (decisions,
       * the affinity index), `engineScrape` and `backendCheck` are kept in memory and count from then: an
       * object evicted when idle, or restarted by a deploy, starts them over. `usage` is kept in storage
       * and goes on across instances; the arms' figures (/admin/stats) count from `countingSince`.
       */
      readonly instanceStartedAt: number;
      /** Epoch ms since which the arms' figures count (/admin/stats `since`), across instances. */
      readonly countingSince: number;
      readonly fleetVersion: string;
      readonly policy: PolicyName;
      readonly leases: number;
      /**
       * Streamed answers' first tokens this instance heard for a lease it held open (firstToken()): what the
       * routing policy's prefill-end lateness learns from (router.prefillEndOverrunMs).
       */
      readonly firstTokens: number;
      readonly backends: readonly BackendStatus[];
      readonly usage: UsageTotals;
      readonly router: RouterStats;
      /** The scrape of the backends' /metrics (ENGINE_SCRAPE_MS), when on. */
      readonly engineScrape?: EngineScrapeStatus;
      /** The check of the backends' /v1/models (BACKEND_CHECK_SECONDS), when on. */
      readonly backendCheck?: BackendCheckStatus;
    }
  | { readonly ok: false; readonly code: "no_fleet"; readonly message: string };

/** The pool's mergeable figures for /admin/stats and /metrics. */
export type SnapshotResult =
  | { readonly ok: true; readonly snapshot: PoolSnapshot }
  | { readonly ok: false; readonly code: "no_fleet"; readonly message: string };

/** An operator's change to a pool, with the pool's spec so a pool no request has reached yet can take it. */
export interface AdminInput {
  readonly fleetVersion: string;
  readonly spec: PoolSpec;
}

export interface DrainInput extends AdminInput {
  readonly backendId: string;
  /** true: drain (no new requests; its streams finish), false: back in rotation. */
  readonly drained: boolean;
  /**
   * The drain may leave this RouterDO no backend in rotation: it is a cell, and another cell of the pool has
   * backends not drained, which take its requests (no_usable: the Worker's cell chooser passes it over).
   */
  readonly mayEmpty?: true;
}

/**
 * The lock a pool split in cells takes in its first cell's RouterDO around each drain (pool-admin.ts drainIn):
 * `holder` (the drain's own id) takes it for `ttlMs`, or, with `release`, frees it.
 */
export interface DrainLockInput {
  readonly holder: string;
  readonly ttlMs: number;
  readonly release?: true;
}

/** Taken (or released); or held by another drain for `heldForMs` more at most. */
export type DrainLockResult = { readonly ok: true } | { readonly ok: false; readonly heldForMs: number };

/** An operator's change to the pool (drain, undrain, reset of the affinity index). */
export type AdminResult =
  | {
      readonly ok: true;
      readonly drained: readonly string[];
      /**
       * A drain or undrain only: the call moved the backend (it was not already so). The Worker undoes
       * the pools a call changed when a later pool refuses; absent (an older RouterDO) is never undone.
       */
      readonly changed?: boolean;
    }
  | {
      readonly ok: false;
      /** unknown_backend: not in the pool. last_backend: draining it would leave the pool none. */
      readonly code: "unknown_backend" | "last_backend";
      readonly message: string;
    };
