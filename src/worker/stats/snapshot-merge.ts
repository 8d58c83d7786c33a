/**
 * Merges pool snapshots: the figures of several RouterDO cells of one pool
 * (each owns a disjoint subset of its backends) into one. Counters add,
 * sketches merge exactly, histogram buckets add, arms match by label, the
 * backends concatenate. Merging is associative and commutative, so cells
 * can be combined in any order.
 */
import type { ArmSnapshot, HistogramData, HitTotals, PoolSnapshot, ShadowSnapshot } from "./pool-snapshot";
import { mergeSketchData } from "./quantile-sketch";

function addRecords<K extends string>(
  a: Readonly<Partial<Record<K, number>>>,
  b: Readonly<Partial<Record<K, number>>>,
): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = { ...a };
  for (const [k, v] of Object.entries(b) as [K, number][]) out[k] = (out[k] ?? 0) + v;
  return out;
}

export function addHits(a: HitTotals, b: HitTotals): HitTotals {
  return {
    requests: a.requests + b.requests,
    promptTokens: a.promptTokens + b.promptTokens,
    available: a.available + b.available,
    captured: a.captured + b.captured,
    reportedPromptTokens: a.reportedPromptTokens + b.reportedPromptTokens,
    delivered: a.delivered + b.delivered,
  };
}

function addHistograms(a: HistogramData, b: HistogramData): HistogramData {
  return { counts: a.counts.map((n, i) => n + (b.counts[i] ?? 0)), sumSeconds: a.sumSeconds + b.sumSeconds };
}

export function mergeArms(a: ArmSnapshot, b: ArmSnapshot): ArmSnapshot {
  return {
    arm: a.arm,
    policy: a.policy,
    routed: a.routed + b.routed,
    reasons: addRecords(a.reasons, b.reasons),
    backends: addRecords(a.backends, b.backends) as Record<string, number>,
    completed: a.completed + b.completed,
    failed: a.failed + b.failed,
    retried: a.retried + b.retried,
    hits: addHits(a.hits, b.hits),
    outputTokens: a.outputTokens + b.outputTokens,
    outputMs: a.outputMs + b.outputMs,
    ttftMs: mergeSketchData(a.ttftMs, b.ttftMs),
    e2eMs: mergeSketchData(a.e2eMs, b.e2eMs),
    ttftHistogram: addHistograms(a.ttftHistogram, b.ttftHistogram),
    e2eHistogram: addHistograms(a.e2eHistogram, b.e2eHistogram),
  };
}

export function mergeShadow(
  a: ShadowSnapshot | undefined,
  b: ShadowSnapshot | undefined,
): ShadowSnapshot | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return {
    policy: a.policy,
    routed: a.routed + b.routed,
    agreed: a.agreed + b.agreed,
    requests: a.requests + b.requests,
    promptTokens: a.promptTokens + b.promptTokens,
    captured: a.captured + b.captured,
  };
}

export function mergeSnapshots(a: PoolSnapshot, b: PoolSnapshot): PoolSnapshot {
  const arms = [...a.arms];
  for (const arm of b.arms) {
    const i = arms.findIndex((x) => x.arm === arm.arm);
    if (i < 0) arms.push(arm);
    else arms[i] = mergeArms(arms[i]!, arm);
  }
  const shadow = mergeShadow(a.shadow, b.shadow);
  const c = a.counters;
  const d = b.counters;
  return {
    fleetVersion: a.fleetVersion === b.fleetVersion ? a.fleetVersion : `${a.fleetVersion}+${b.fleetVersion}`,
    at: Math.max(a.at, b.at),
    ...earliest(a.since, b.since),
    backends: [...a.backends, ...b.backends],
    counters: {
      retried: c.retried + d.retried,
      retriesRefused: c.retriesRefused + d.retriesRefused,
      ejections: c.ejections + d.ejections,
      restorations: c.restorations + d.restorations,
      expired: c.expired + d.expired,
      observed: c.observed + d.observed,
      shed: (c.shed ?? 0) + (d.shed ?? 0),
    },
    arms: arms.sort((x, y) => x.arm.localeCompare(y.arm)),
    ...(shadow !== undefined ? { shadow } : {}),
  };
}

/** The cells' earliest "since": the merged counters count from when the first cell started counting. */
function earliest(a: number | undefined, b: number | undefined): { since?: number } {
  if (a === undefined) return b === undefined ? {} : { since: b };
  return { since: b === undefined ? a : Math.min(a, b) };
}
