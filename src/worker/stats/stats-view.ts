/**
 * /admin/stats: a pool's snapshot as an operator reads it — the raw totals
 * plus what follows from them: hit rates, latency quantiles from the
 * sketches, output tokens per second. Rates are null where nothing was
 * counted yet (a 0 would read as a measurement).
 */
import {
  type ArmSnapshot,
  type BackendSnapshot,
  type HitTotals,
  NO_HITS,
  type PoolCounters,
  type PoolSnapshot,
} from "./pool-snapshot";
import { QuantileSketch, type SketchData } from "./quantile-sketch";
import { addHits } from "./snapshot-merge";

export interface Quantiles {
  readonly count: number;
  readonly p50: number | null;
  readonly p90: number | null;
  readonly p99: number | null;
}

export interface HitRates {
  /** available / promptTokens, captured / promptTokens, delivered / reportedPromptTokens. */
  readonly available: number | null;
  readonly captured: number | null;
  readonly delivered: number | null;
}

export interface ArmView {
  readonly arm: string;
  readonly policy: string;
  readonly requests: number;
  readonly completed: number;
  readonly errors: number;
  /** Attempts that failed and were retried elsewhere (in neither `requests` nor `errors`). */
  readonly retried: number;
  readonly reasons: ArmSnapshot["reasons"];
  readonly backends: ArmSnapshot["backends"];
  readonly hits: HitTotals;
  /** expected = captured, reported = delivered (the names of the log line). */
  readonly hitRate: HitRates & { readonly expected: number | null; readonly reported: number | null };
  readonly ttftMs: Quantiles;
  readonly e2eMs: Quantiles;
  readonly outputTokens: number;
  /** Output tokens over the summed end-to-end time of the requests that produced them. */
  readonly outputTokensPerSecond: number | null;
}

export interface PoolView {
  readonly fleetVersion: string;
  readonly at: number;
  /** Epoch ms since which the counters count (PoolSnapshot.since). */
  readonly since?: number;
  readonly backends: readonly BackendSnapshot[];
  readonly counters: PoolCounters;
  /** Every arm's hits together: where the pool's reuse went. */
  readonly hits: HitTotals;
  readonly hitRate: HitRates;
  readonly arms: readonly ArmView[];
  readonly shadow?: {
    readonly policy: string;
    readonly requests: number;
    readonly agreed: number;
    readonly routed: number;
    readonly promptTokens: number;
    readonly captured: number;
    /** What prefix_aware would have expected cached, over the requests the arms' hit figures cover. */
    readonly expectedHitRate: number | null;
  };
}

const ratio = (n: number, d: number): number | null => (d > 0 ? n / d : null);

function quantiles(d: SketchData): Quantiles {
  const s = QuantileSketch.fromData(d);
  const q = (p: number) => s.quantile(p) ?? null;
  return { count: d.count, p50: q(0.5), p90: q(0.9), p99: q(0.99) };
}

function rates(h: HitTotals): HitRates {
  return {
    available: ratio(h.available, h.promptTokens),
    captured: ratio(h.captured, h.promptTokens),
    delivered: ratio(h.delivered, h.reportedPromptTokens),
  };
}

function armView(a: ArmSnapshot): ArmView {
  const r = rates(a.hits);
  return {
    arm: a.arm,
    policy: a.policy,
    // Client requests, not attempts: a retried attempt is the same request (its failure is not an error
    // the client saw; the retry's end is counted).
    requests: a.routed - a.retried,
    completed: a.completed,
    errors: a.failed,
    retried: a.retried,
    reasons: a.reasons,
    backends: a.backends,
    hits: a.hits,
    hitRate: { ...r, expected: r.captured, reported: r.delivered },
    ttftMs: quantiles(a.ttftMs),
    e2eMs: quantiles(a.e2eMs),
    outputTokens: a.outputTokens,
    outputTokensPerSecond: a.outputMs > 0 ? (a.outputTokens * 1000) / a.outputMs : null,
  };
}

export function poolView(s: PoolSnapshot): PoolView {
  const hits = s.arms.reduce<HitTotals>((t, a) => addHits(t, a.hits), NO_HITS);
  return {
    fleetVersion: s.fleetVersion,
    at: s.at,
    ...(s.since !== undefined ? { since: s.since } : {}),
    backends: s.backends,
    counters: s.counters,
    hits,
    hitRate: rates(hits),
    arms: s.arms.map(armView),
    ...(s.shadow !== undefined
      ? { shadow: { ...s.shadow, expectedHitRate: ratio(s.shadow.captured, s.shadow.promptTokens) } }
      : {}),
  };
}
