/** What a Router reports about itself (Router.stats()): for /healthz, the simulator and tests. */
import type { PromptEstimateError } from "./types";

export interface BackendStats {
  readonly id: string;
  /** Not ejected by outlier detection. */
  readonly healthy: boolean;
  /** Held out of new decisions by an operator (it finishes its streams). */
  readonly drained: boolean;
  /** Consecutive backend faults (the count that ejects at `fall`). */
  readonly faults: number;
  /** Epoch ms until which a 429 asked us to send it nothing (absent when not throttled). */
  readonly throttledUntil?: number;
  /** Ejected (or watched: HealthTracker.watchHeld): epoch ms of its next /health probe. */
  readonly nextProbeAt?: number;
  /**
   * Times in a row it was held out again soon after good checks brought it back (absent when none): each
   * doubles the wait for its first probe (HealthTracker, RELAPSE_WINDOW).
   */
  readonly relapses?: number;
  /**
   * On probation (back while it has relapses): good requests it still owes before a fault no longer holds it out
   * at once (absent when none: HealthTracker.probationAt).
   */
  readonly probation?: number;
  readonly weight: number;
  readonly inflight: number;
  /** Blocks the index holds keys for (anonymous entries, which stand for unkeyed KV, left out). */
  readonly indexBlocks: number;
  readonly indexCapacityBlocks: number;
  /** Requests routed here since the backend joined. */
  readonly routed: number;
  /**
   * The prefill rate the policy has learned for this backend from the TTFTs it saw, tokens/s (cost-based
   * policies only): what an uncached token is judged to cost here.
   */
  readonly prefillTokensPerSec?: number;
  /**
   * What one more request in flight adds to an engine step here, ms, as the policy has learned it from
   * completions (decode time per output token against requests in flight; cost-based policies only,
   * absent until enough are seen): what a request in flight really costs the others, beside the
   * constant the cost model charges (decodeMsPerInflight).
   */
  readonly learnedInflightMs?: number;
  /**
   * How wrong the Worker's prompt count past the key window has been here (prefix_aware: the hold back's
   * margin grows from it, ./estimate-margin.ts); absent before any completion whose prompt ran past it.
   */
  readonly promptEstimateError?: PromptEstimateError;
}

export interface RouterStats {
  readonly policy: string;
  readonly blockTokens: number;
  readonly balanceFactor: number;
  readonly indexStride: number;
  readonly totalInflight: number;
  readonly backends: readonly BackendStats[];
  /** Bytes held by all backends' affinity indexes. */
  readonly indexBytes: number;
  /** Blocks the indexes hold keys for (keyed entries × indexStride). */
  readonly indexBlocks: number;
  /** Index entries dropped because a backend reported fewer cached tokens than expected. */
  readonly correctedBlocks: number;
  /** Index entries dropped because their request failed before computing them. */
  readonly forgottenBlocks: number;
  /**
   * How late past their predicted ends the pool's first tokens have come, ms (prefix_aware, learned from the
   * streamed answers' first tokens: Router.firstToken); absent until one is heard.
   */
  readonly prefillEndOverrunMs?: number;
}
