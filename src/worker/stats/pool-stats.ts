/**
 * What a RouterDO counts about its pool's traffic, per A/B arm and for the
 * shadow, in the mergeable shape of pool-snapshot.ts. Fed twice per
 * request: when it is routed (reason, backend) and when its lease ends
 * (outcome, usage, latency). Constant memory: counters, two sketches and
 * two histograms per arm, a counter per backend.
 */
import type { PoolDecision, PoolRouter } from "../../routing";
import type { PolicyName, RouteReason } from "../../routing/types";
import type { CompleteInput, UsageTotals } from "../router/router-rpc";
import {
  type ArmLabel,
  type ArmSnapshot,
  type BackendCheckSummary,
  type HistogramData,
  type HitTotals,
  LATENCY_BUCKETS_SECONDS,
  NO_HITS,
  type PoolSnapshot,
  type ShadowSnapshot,
} from "./pool-snapshot";
import { QuantileSketch } from "./quantile-sketch";
import { mergeArms, mergeShadow } from "./snapshot-merge";

/** What a lease carries from its decision to its end, for the hit figures. */
export interface DecisionFigures {
  /** The gateway's prompt tokens as routing counted them (RouteDecision.routed): available's and captured's. */
  readonly promptTokens: number;
  readonly available: number;
  readonly captured: number;
  /** The shadow's expected reuse, when a shadow decided too. */
  readonly shadowCaptured?: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

class Histogram {
  private readonly counts = new Array<number>(LATENCY_BUCKETS_SECONDS.length + 1).fill(0);
  private sum = 0;

  add(seconds: number): void {
    let i = 0;
    while (i < LATENCY_BUCKETS_SECONDS.length && seconds > LATENCY_BUCKETS_SECONDS[i]!) i++;
    this.counts[i]!++;
    this.sum += seconds;
  }

  data(): HistogramData {
    return { counts: [...this.counts], sumSeconds: this.sum };
  }
}

class ArmStats {
  routed = 0;
  completed = 0;
  failed = 0;
  retried = 0;
  outputTokens = 0;
  outputMs = 0;
  readonly reasons: Partial<Record<RouteReason, number>> = {};
  readonly backends: Record<string, number> = {};
  readonly hits: Mutable<HitTotals> = { ...NO_HITS };
  readonly ttft = new QuantileSketch();
  readonly e2e = new QuantileSketch();
  readonly ttftHistogram = new Histogram();
  readonly e2eHistogram = new Histogram();
  /** What an earlier RouterDO instance counted on this arm (restore()): added to every snapshot. */
  private saved: ArmSnapshot | undefined;

  constructor(
    readonly arm: ArmLabel,
    readonly policy: PolicyName,
  ) {}

  /**
   * Goes on from a saved snapshot of this arm (same label and policy: the caller checked). Kept
   * whole and merged into each snapshot by mergeArms, the same sum the cells' figures go through,
   * so a field added to ArmSnapshot is carried over with no copy here to keep in step. A row saved
   * before a field existed counts it as zero; a histogram of another bucket layout is dropped
   * (its counts would land in the wrong buckets).
   */
  restore(d: ArmSnapshot): void {
    const empty = this.counted();
    const histogram = (h: HistogramData, none: HistogramData) =>
      h.counts.length === none.counts.length ? h : none;
    const saved: ArmSnapshot = {
      ...empty,
      ...d,
      hits: { ...NO_HITS, ...d.hits },
      ttftHistogram: histogram(d.ttftHistogram, empty.ttftHistogram),
      e2eHistogram: histogram(d.e2eHistogram, empty.e2eHistogram),
    };
    this.saved = this.saved === undefined ? saved : mergeArms(this.saved, saved);
  }

  snapshot(): ArmSnapshot {
    const counted = this.counted();
    return this.saved === undefined ? counted : mergeArms(counted, this.saved);
  }

  /** What this instance counted itself. */
  private counted(): ArmSnapshot {
    return {
      arm: this.arm,
      policy: this.policy,
      routed: this.routed,
      reasons: { ...this.reasons },
      backends: { ...this.backends },
      completed: this.completed,
      failed: this.failed,
      retried: this.retried,
      hits: { ...this.hits },
      outputTokens: this.outputTokens,
      outputMs: this.outputMs,
      ttftMs: this.ttft.toData(),
      e2eMs: this.e2e.toData(),
      ttftHistogram: this.ttftHistogram.data(),
      e2eHistogram: this.e2eHistogram.data(),
    };
  }
}

/** A shadow that has counted nothing yet. */
function noShadow(policy: PolicyName): Mutable<ShadowSnapshot> {
  return { policy, routed: 0, agreed: 0, requests: 0, promptTokens: 0, captured: 0 };
}

export class PoolStats {
  private readonly arms: ArmStats[];
  private readonly shadow: Mutable<ShadowSnapshot> | undefined;
  /** The shadow's figures an earlier RouterDO instance counted (restore()): added to every snapshot. */
  private savedShadow: ShadowSnapshot | undefined;

  constructor(policies: readonly PolicyName[], shadowPolicy?: PolicyName) {
    this.arms = policies.map((p, i) => new ArmStats(i === 0 ? "a" : "b", p));
    this.shadow = shadowPolicy === undefined ? undefined : noShadow(shadowPolicy);
  }

  /** Counts a decision; returns what its lease must carry to its end for the hit figures. */
  routed(d: Pick<PoolDecision, "arm" | "decision" | "shadow">, promptTokens: number): DecisionFigures {
    const { backendId, reason } = d.decision;
    const a = this.arms[d.arm];
    if (a !== undefined) {
      a.routed++;
      a.reasons[reason] = (a.reasons[reason] ?? 0) + 1;
      a.backends[backendId] = (a.backends[backendId] ?? 0) + 1;
    }
    if (this.shadow !== undefined && d.shadow !== undefined) {
      this.shadow.routed++;
      if (d.shadow.backendId === backendId) this.shadow.agreed++;
    }
    return {
      promptTokens,
      available: d.decision.availableCachedTokens,
      captured: d.decision.expectedCachedTokens,
      ...(d.shadow !== undefined ? { shadowCaptured: d.shadow.expectedCachedTokens } : {}),
    };
  }

  /**
   * A lease of `arm` ended with what the Worker reported. `figures` undefined: a lease an earlier
   * RouterDO instance decided (its decision's figures went with it): counted, but not in the hits.
   */
  ended(arm: number, figures: DecisionFigures | undefined, input: CompleteInput): void {
    const a = this.arms[arm];
    if (a === undefined || input.failure === "unused") return;
    if (input.ok && input.backendError !== true) a.completed++;
    else if (input.retried === true) a.retried++;
    else if (input.failure !== "client_abort") a.failed++;
    if (input.ok && input.cachedTokens !== undefined && figures !== undefined) {
      const h = a.hits;
      h.requests++;
      h.promptTokens += figures.promptTokens;
      h.available += figures.available;
      h.captured += figures.captured;
      h.reportedPromptTokens += input.promptTokens ?? figures.promptTokens;
      h.delivered += input.cachedTokens;
      if (this.shadow !== undefined && figures.shadowCaptured !== undefined) {
        this.shadow.requests++;
        this.shadow.promptTokens += figures.promptTokens;
        this.shadow.captured += figures.shadowCaptured;
      }
    }
    if (!input.ok) return;
    if (input.ttftMs !== undefined) {
      a.ttft.add(input.ttftMs);
      a.ttftHistogram.add(input.ttftMs / 1000);
    }
    if (input.durationMs !== undefined) {
      a.e2e.add(input.durationMs);
      a.e2eHistogram.add(input.durationMs / 1000);
      if (input.outputTokens !== undefined) {
        a.outputTokens += input.outputTokens;
        a.outputMs += input.durationMs;
      }
    }
  }

  /**
   * Takes back what snapshot() gave (a RouterDO restarting from its saved figures): each arm whose
   * label and policy match, and the shadow's if its policy does. Figures of another configuration
   * are dropped: they would describe other arms.
   */
  restore(saved: { arms: readonly ArmSnapshot[]; shadow?: ShadowSnapshot }): void {
    for (const d of saved.arms) {
      const a = this.arms.find((x) => x.arm === d.arm);
      if (a !== undefined && a.policy === d.policy) a.restore(d);
    }
    const sh = this.shadow;
    if (sh !== undefined && saved.shadow !== undefined && saved.shadow.policy === sh.policy) {
      const d = { ...noShadow(sh.policy), ...saved.shadow };
      this.savedShadow = mergeShadow(this.savedShadow, d);
    }
  }

  arm(arm: number): ArmSnapshot | undefined {
    return this.arms[arm]?.snapshot();
  }

  snapshot(): { arms: ArmSnapshot[]; shadow?: ShadowSnapshot } {
    const arms = this.arms.map((a) => a.snapshot());
    if (this.shadow === undefined) return { arms };
    return { arms, shadow: mergeShadow({ ...this.shadow }, this.savedShadow)! };
  }
}

/** The pool's snapshot: its backends as the Routers see them, the RouterDO's counters, the arms and the shadow. */
export function poolSnapshot(
  fleetVersion: string,
  router: PoolRouter,
  stats: PoolStats,
  usage: UsageTotals,
  now: number,
  since: number,
  checks?: (id: string) => BackendCheckSummary | undefined,
): PoolSnapshot {
  const { arms, shadow } = stats.snapshot();
  return {
    fleetVersion,
    at: now,
    since,
    backends: router.stats(now).arms[0]!.backends.map((b) => ({
      id: b.id,
      healthy: b.healthy,
      drained: b.drained,
      throttled: b.throttledUntil !== undefined,
      // Every arm's requests in flight there: the backend's real load.
      inflight: router.inflight(b.id),
      consecutiveFailures: b.faults,
      ...(b.nextProbeAt !== undefined ? { nextProbeAt: b.nextProbeAt } : {}),
      ...(b.relapses !== undefined ? { relapses: b.relapses } : {}),
      ...(b.probation !== undefined ? { probation: b.probation } : {}),
      ...(b.prefillTokensPerSec !== undefined ? { prefillTokensPerSec: b.prefillTokensPerSec } : {}),
      ...(b.learnedInflightMs !== undefined ? { learnedInflightMs: b.learnedInflightMs } : {}),
      ...(b.promptEstimateError !== undefined ? { promptEstimateError: b.promptEstimateError } : {}),
      ...checkOf(checks?.(b.id)),
    })),
    counters: {
      retried: usage.retried,
      retriesRefused: usage.retriesRefused,
      ejections: usage.ejections,
      restorations: usage.restorations,
      expired: usage.expired,
      observed: usage.observed,
      shed: usage.shed,
    },
    arms,
    ...(shadow !== undefined ? { shadow } : {}),
  };
}

/** A backend's check as the snapshot carries it (state, status, when), or nothing. */
function checkOf(c: BackendCheckSummary | undefined): { check?: BackendCheckSummary } {
  if (c === undefined) return {};
  return { check: { state: c.state, ...(c.status !== undefined ? { status: c.status } : {}), at: c.at } };
}
