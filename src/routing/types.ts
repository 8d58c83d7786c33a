/**
 * The contracts of the routing core. Everything in src/routing is pure:
 * no Workers APIs, no I/O, no clocks, no Math.random — time (`now`, in ms)
 * and randomness (`random`, a [0,1) source) are parameters. The RouterDO and
 * the simulator both import this code unchanged, so what we measure is what
 * we ship.
 */

/**
 * The key of one full block of a request's prefix, chained over everything
 * before it (made in src/prefix/block-keys.ts; an exact integer below 2^53):
 * two keys are equal only when the whole prefix up to that block is equal.
 */
export type BlockKey = number;

/** A backend as routing sees it (no URL, no credentials: those stay at the edge). */
export interface BackendSpec {
  readonly id: string;
  /** Relative capacity; the bounded-load cap and the ring honour it. > 0. */
  readonly weight: number;
  /** KV-cache capacity in tokens; sizes this backend's affinity index. > 0. */
  readonly kvCacheTokens: number;
}

/** What a request looks like to the router: its prefix, as chained block keys. */
export interface RouteRequest {
  /** Keys of the full blocks of the (capped) prefix, in prompt order. May be empty. */
  readonly blocks: readonly BlockKey[];
  /** Prompt tokens in total (can exceed blocks.length * blockTokens). */
  readonly promptTokens: number;
  /** Requested output tokens, when known (max_tokens); a load hint only. */
  readonly outputTokens?: number;
  /**
   * A prompt shorter than one block has no block keys: the key of its whole
   * text instead (src/prefix), where the ring places it. Placement only:
   * no engine caches a partial block. Absent: the prompt length stands in.
   */
  readonly promptKey?: BlockKey;
  /**
   * Sequences the engine runs for it: a /v1/completions batch's prompts (promptTokens is their sum).
   * Absent: 1. Read by the bound on the prompt's count (prompt-bound.ts) and by prefix_aware, which never
   * notes a batch's sum as its first prompt's extent past the key window (policies/prefix-aware.ts).
   */
  readonly prompts?: number;
  /**
   * Of promptTokens, the part the Worker's estimate claims for text past its keys that it cannot vouch for
   * (runs of one repeated character: src/prefix/run-excess.ts). Charged as load like the rest; the affinity
   * index evicts for it only when the engine's own prompt count confirms it, at settle (router.ts record).
   * Absent: 0.
   */
  readonly unconfirmedTokens?: number;
}

/**
 * Why a backend was chosen.
 * - affinity: it holds (we believe) a cached prefix of this request and was the cheapest.
 * - ring: no useful cached prefix anywhere. consistent_hash: placed at the ring home of the
 *         request's key. prefix_aware: placed by expected cost (queued prefill, KV in flight),
 *         near-equal costs decided by the key's ring order.
 * - spill: the preferred backend (affinity, or the ring home of a new prefix) was at its
 *          bounded-load cap, so the next one in the key's probe sequence (or next-cheapest) took it.
 * - fallback: every healthy backend was at its cap; the least loaded took it.
 * Policies that ignore affinity (least_outstanding, round_robin, random) report
 * `ring` when their own placement rule chose and `spill` when the cap overrode it.
 * prefix_aware also reports `spill` when its cost model sent a request to a
 * backend with no match because the backends holding the prefix had too much
 * prefill queued (they were costlier, though under their cap).
 */
export type RouteReason = "affinity" | "ring" | "spill" | "fallback";

export interface RouteDecision {
  readonly backendId: string;
  readonly reason: RouteReason;
  /** Prompt tokens we expect the backend to find in its KV cache (reuse captured by the decision). */
  readonly expectedCachedTokens: number;
  /**
   * The longest prefix of this request any usable backend holds, per the
   * affinity index, in prompt tokens (reuse available to a decision): at
   * least expectedCachedTokens. The gap between the two is what the routing
   * left on the table.
   */
  readonly availableCachedTokens: number;
  /** Requests this router had in flight on that backend before this one. */
  readonly inflightAtDecision: number;
  /**
   * The request as routing counted it, when that is not as it came: its prompt past what the largest engine
   * holds, or prompt + output hint past it (prompt-bound.ts). The expected and available figures above are
   * of this count. Absent: the request's own promptTokens and outputTokens.
   */
  readonly routed?: RoutedCount;
}

/** A request's prompt and output hint as the routing core counted them (RouteDecision.routed). */
export interface RoutedCount {
  readonly promptTokens: number;
  /** The output hint routing charged; absent when the request sent none. */
  readonly outputTokens?: number;
}

/** What happened to a routed request, reported when it ends. */
export interface RouteOutcome {
  /** True when the backend produced a response (any tokens); false on error/abort before output. */
  readonly ok: boolean;
  readonly promptTokens?: number;
  /** usage.prompt_tokens_details.cached_tokens as the backend reported it. */
  readonly cachedTokens?: number;
  /** Time to first token as seen by the gateway, ms. */
  readonly ttftMs?: number;
  /**
   * usage.completion_tokens as the backend reported it at the response's end: the answer's blocks it
   * held in KV (kv-footprint.ts tailEntries). Absent on failures and from callers that do not report it.
   */
  readonly outputTokens?: number;
  /**
   * The backend itself failed (connect error, timeout, 502/503/504, a cut
   * stream, a 500 the request did not also get elsewhere): counts toward
   * its ejection. Unset for client aborts and request-caused errors.
   */
  readonly backendFault?: boolean;
}

/** Per-call environment: the only source of time and randomness in the core. */
export interface RouteContext {
  /** Milliseconds on any monotonic-enough clock (the DO passes the wall clock, the simulator its virtual time). */
  readonly now: number;
  /** Uniform [0, 1). */
  readonly random: () => number;
}

export const POLICY_NAMES = [
  "prefix_aware",
  "least_outstanding",
  "round_robin",
  "random",
  "consistent_hash",
] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

/**
 * A policy's choice: an index into FleetView.backends, and why. What the
 * chosen backend is expected to hold cached is the Router's to say, from
 * its affinity index (RouteDecision.expectedCachedTokens).
 */
export interface PolicyPick {
  readonly index: number;
  readonly reason: RouteReason;
}

/**
 * One reading of a backend's engine state: requests running and waiting,
 * KV use. The RouterDO reads them from each engine's Prometheus /metrics on
 * its alarm (ENGINE_SCRAPE_MS; durable-objects/engine-scrape.ts), so a
 * reading is as old as the last scrape; the simulator gives the peers live
 * readings (as their own scrapers would, minus their small lag) and our
 * policies readings lagged as that scrape would take them.
 */
export interface EngineSignals {
  readonly running: number;
  readonly waiting: number;
  /** Fraction of KV blocks in use, 0..1. */
  readonly kvUsage: number;
  /** When the engine reported these, on RouteContext.now's clock: their age is now − sampledAt. */
  readonly sampledAt: number;
  /**
   * Requests this router had in flight on the backend when the reading was
   * taken: its own share of running + waiting (the rest is load it did not
   * place). Absent: unknown.
   */
  readonly ownInflight?: number;
  /**
   * Exact longest cached prefix of `blocks` on this engine, in blocks: what a
   * router fed by the engines' KV events (NVIDIA Dynamo) knows. Simulator only.
   */
  readonly cachedPrefixBlocks?: (blocks: readonly BlockKey[]) => number;
}

/** Read-only view of the fleet at decision time. Index i always refers to backends[i]. */
export interface FleetView {
  readonly backends: readonly BackendSpec[];
  readonly healthy: readonly boolean[];
  /** Requests this router placed that have not completed, per backend. */
  readonly inflight: readonly number[];
  readonly totalInflight: number;
  readonly blockTokens: number;
  /** Bounded-load cap of backend i for the next request: ceil(c * w_i / Σw_healthy * (totalInflight + 1)). */
  cap(i: number): number;
  /** c of the bounded-load cap; prefix_aware applies it to work (work-bound.ts), the others to requests. */
  readonly balanceFactor: number;
  /**
   * Keyed prompt tokens the requests this router has in flight on backend i pin in its KV cache, shared
   * blocks once (affinity-index.ts pinnedEntries): memory the engine cannot free until one of them ends.
   * Absent when the router keeps no affinity index.
   */
  pinnedTokens?(i: number): number;
  /** Longest prefix of `blocks` (in blocks) that the affinity index believes each backend holds. */
  matchedBlocks(blocks: readonly BlockKey[]): Int32Array;
  /**
   * Backend i's latest engine reading, undefined when there is none (never
   * scraped, or expired). Absent when the router reads no engine state.
   */
  readonly engineSignals?: (i: number) => EngineSignals | undefined;
}

/**
 * A routing policy: filter → score → pick over a FleetView. Policies keep
 * their own state (counters, peer baselines' trees) and update it in the
 * hooks, which the Router calls after the pick is committed.
 */
export interface RoutingPolicy {
  readonly name: string;
  pick(req: RouteRequest, fleet: FleetView, ctx: RouteContext): PolicyPick;
  onRouted?(req: RouteRequest, index: number, fleet: FleetView, ctx: RouteContext): void;
  onCompleted?(req: RouteRequest, index: number, outcome: RouteOutcome, ctx: RouteContext): void;
  /** The first token of a request it placed on `index` streamed back (Router.firstToken): its prefill is over. */
  onFirstToken?(req: RouteRequest, index: number, ctx: RouteContext): void;
  /** How late past their predicted ends first tokens have come, ms, as learned (onFirstToken); absent until one. */
  prefillEndOverrunMs?(): number | undefined;
  /** Backends were added/removed/reweighted; indexes into FleetView changed. */
  onBackendsChanged?(backends: readonly BackendSpec[]): void;
  /** The prefill rate the policy has learned for backend `index`, tokens/s; absent when it learns none. */
  prefillTokensPerSec?(index: number): number | undefined;
  /** What the policy has learned one more request in flight adds to a step on backend `index`, ms; absent before, or when it learns none. */
  learnedInflightMs?(index: number): number | undefined;
  /**
   * How wrong the Worker's prompt count past the key window has been on backend `index`, relative to the
   * part it estimated (usage.prompt_tokens against it); absent before any such completion.
   */
  promptEstimateError?(index: number): PromptEstimateError | undefined;
}

/** The learned error of the Worker's prompt count past the key window: (usage − count) / count past it. */
export interface PromptEstimateError {
  /** Completions whose prompt ran past the window, seen on this backend. */
  readonly samples: number;
  /** Exponentially weighted mean of the relative error (positive: the Worker counted low). */
  readonly mean: number;
  /** Its standard deviation. */
  readonly sd: number;
}
