/**
 * A pool's figures as its RouterDO reports them (RouterDO.snapshot()): plain
 * data, cumulative since `since` (kept across the object's evictions and
 * restarts: fleet-store.ts SavedCounters), and mergeable — counters add,
 * sketches merge, histogram buckets add, backends of different cells
 * concatenate (mergeSnapshots, snapshot-merge.ts). The Worker derives rates
 * and quantiles from it (/admin/stats, /metrics) after merging.
 */
import type { PolicyName, PromptEstimateError, RouteReason } from "../../routing/types";
import type { CheckState } from "../backend-check/models-check";
import type { SketchData } from "./quantile-sketch";

/** Reuse in prompt tokens, on one scale (README "Where the hits went"). */
export interface HitTotals {
  /** Requests these figures cover: completed with usage reported by the engine. */
  readonly requests: number;
  /**
   * The gateway's prompt tokens of those requests as routing counted them (within what the largest engine
   * holds: src/routing/prompt-bound.ts), the count available and captured are taken of: their denominator.
   * One request estimated at millions of tokens no longer sinks the pool's hit rates.
   */
  readonly promptTokens: number;
  /** Longest prefix any usable backend held, per the index, at decision time. */
  readonly available: number;
  /** Expected cached on the chosen backend (what the decision captured). */
  readonly captured: number;
  /** The engines' prompt tokens of the same requests: the denominator of delivered. */
  readonly reportedPromptTokens: number;
  /** usage.prompt_tokens_details.cached_tokens: what the engines reused. */
  readonly delivered: number;
}

/** Nothing counted yet. */
export const NO_HITS: HitTotals = {
  requests: 0,
  promptTokens: 0,
  available: 0,
  captured: 0,
  reportedPromptTokens: 0,
  delivered: 0,
};

/** Upper bounds (seconds) of the latency histograms' buckets; +Inf is implied. */
export const LATENCY_BUCKETS_SECONDS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
] as const;

/** Non-cumulative counts per bucket of LATENCY_BUCKETS_SECONDS, the last one for +Inf; and the sum. */
export interface HistogramData {
  readonly counts: readonly number[];
  readonly sumSeconds: number;
}

export type ArmLabel = "a" | "b";

export interface ArmSnapshot {
  readonly arm: ArmLabel;
  readonly policy: PolicyName;
  /** Decisions made by this arm (a retry is a second decision). */
  readonly routed: number;
  readonly reasons: Readonly<Partial<Record<RouteReason, number>>>;
  /** Decisions per backend id. */
  readonly backends: Readonly<Record<string, number>>;
  /** Ended requests: completed (the backend answered), failed (it did not, or broke off). */
  readonly completed: number;
  readonly failed: number;
  /**
   * Ended attempts that failed and were retried elsewhere (not in `failed`): the client's request is the
   * retry's. Client requests decided = routed − retried.
   */
  readonly retried: number;
  readonly hits: HitTotals;
  readonly outputTokens: number;
  /** Summed end-to-end time of the requests that reported output tokens, ms. */
  readonly outputMs: number;
  /** Backend call → first content, streamed requests. */
  readonly ttftMs: SketchData;
  /** Gateway received the request → last byte. */
  readonly e2eMs: SketchData;
  readonly ttftHistogram: HistogramData;
  readonly e2eHistogram: HistogramData;
}

export interface ShadowSnapshot {
  readonly policy: PolicyName;
  readonly routed: number;
  /** Decisions where the shadow chose the backend that served. */
  readonly agreed: number;
  /** Over the same requests as the arms' hits: gateway prompt tokens and the shadow's expected reuse. */
  readonly requests: number;
  readonly promptTokens: number;
  readonly captured: number;
}

export interface BackendSnapshot {
  readonly id: string;
  /** In rotation (not ejected by outlier detection). */
  readonly healthy: boolean;
  readonly drained: boolean;
  readonly throttled: boolean;
  readonly inflight: number;
  readonly consecutiveFailures: number;
  /** Held out (ejected, or a cell's failing last backend watched): epoch ms of its next /health probe. */
  readonly nextProbeAt?: number;
  /**
   * Times in a row it failed again soon after its probes brought it back (absent when none): why its next
   * probe is that far off (the probe interval doubled per relapse, up to 32×; README "Health").
   */
  readonly relapses?: number;
  /**
   * On probation (back while it has relapses): good requests it still owes before a fault no longer holds it out
   * at once (absent when none; README "Health").
   */
  readonly probation?: number;
  /** The prefill rate the first arm's policy has learned here, tokens/s (cost-based policies only). */
  readonly prefillTokensPerSec?: number;
  /** What one more request in flight adds to a step here, ms, as the first arm's policy has learned it (absent before). */
  readonly learnedInflightMs?: number;
  /** How wrong the Worker's prompt count past the key window has been here (first arm's policy; absent before). */
  readonly promptEstimateError?: PromptEstimateError;
  /** The latest check of its /v1/models (BACKEND_CHECK_SECONDS; absent: off, or not checked yet). */
  readonly check?: BackendCheckSummary;
}

/** A backend check as the dashboard shows it: its state, and the HTTP status when one came. */
export interface BackendCheckSummary {
  readonly state: CheckState;
  readonly status?: number;
  /** Epoch ms of the check. */
  readonly at: number;
}

export interface PoolCounters {
  readonly retried: number;
  readonly retriesRefused: number;
  readonly ejections: number;
  readonly restorations: number;
  readonly expired: number;
  readonly observed: number;
  /** Requests shed at the bound on requests in flight (absent from an object deployed before it). */
  readonly shed?: number;
}

export interface PoolSnapshot {
  readonly fleetVersion: string;
  /** Epoch ms the snapshot was taken. */
  readonly at: number;
  /**
   * Epoch ms since which the counters count: when the pool's RouterDO first counted under its
   * present routing options (policy, arms, shadow, block size; a change of them starts over).
   * Absent from an object deployed before it.
   */
  readonly since?: number;
  readonly backends: readonly BackendSnapshot[];
  readonly counters: PoolCounters;
  readonly arms: readonly ArmSnapshot[];
  readonly shadow?: ShadowSnapshot;
}
