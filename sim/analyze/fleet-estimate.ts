/**
 * What prefix-aware routing would do on a fleet of N backends of a given KV
 * size, for the simulation window, against least_outstanding (what most
 * fleets run): hit rate and TTFT p50/p99 at the log's own timing, prefill
 * GPU-seconds saved per hour at the log's mean rate, and requests per
 * instance at a TTFT p99 SLO, found by scaling the window's arrivals
 * (capacity-search.ts) — at most `searchRuns` simulator runs per policy.
 *
 * Per-instance capacity is the fleet's sustained rate ÷ N, and the
 * instances a policy needs at the log's rate are that rate ÷ its per-instance
 * capacity, rounded up: linear in N, which ignores that a bigger fleet also
 * holds more cache (a first-order estimate; re-run with --backends to check).
 */
import type { SimPolicyName } from "../policies";
import { routerFactory, viewOf } from "../policies";
import { type PreparedWorkload, prepareWorkload } from "../prepare";
import { runPolicies } from "../run";
import { engineConfig, type FleetConfig, type PolicyResult, simulatePolicy } from "../simulator";
import { percentile, sortedCopy } from "../stats";
import type { Workload } from "../workloads/types";
import { type CapacityResult, searchCapacity } from "./capacity-search";

export const OURS = "prefix_aware" satisfies SimPolicyName;
export const BASELINE = "least_outstanding" satisfies SimPolicyName;
export const COMPARED = [OURS, BASELINE] as const;

/** An interactive chat budget: past ~2 s users see a stall. */
export const DEFAULT_SLO_TTFT_P99_MS = 2000;
/**
 * The default SLO is at least this many times the uncached prefill of the
 * window's p99 prompt on one engine: a p99 target below that measures the
 * prompts, not the routing (no policy can meet it, so none is "better").
 */
export const SLO_PREFILL_HEADROOM = 1.5;
export const DEFAULT_SEARCH_RUNS = 8;

export interface EstimateOptions {
  readonly backends: number;
  readonly kvTokens: number;
  readonly seed: number;
  /** The SLO; absent: defaultSlo. */
  readonly sloTtftP99Ms?: number;
  readonly searchRuns: number;
  /** Mean requests per second over the whole log. */
  readonly logRatePerSec: number;
  /** Told after each simulator run, with the runs done so far and the most there can be. */
  readonly onRun?: (done: number, most: number) => void;
}

export interface PolicyFigures {
  readonly hitRate: number;
  readonly ttftP50Ms: number;
  readonly ttftP99Ms: number;
  readonly prefillGpuSeconds: number;
  /** Highest sustained requests/s per instance with TTFT p99 within the SLO; 0 if none. */
  readonly requestsPerInstanceAtSlo: number;
  readonly capacityBound: CapacityResult["bound"];
  /** Instances this policy needs at the log's mean rate; null if it never met the SLO. */
  readonly instancesAtLogRate: number | null;
}

export interface FleetEstimate {
  readonly backends: number;
  readonly kvTokens: number;
  readonly blockTokens: number;
  readonly simulatedRequests: number;
  readonly windowRatePerSec: number;
  readonly logRatePerSec: number;
  readonly oracleHitRate: number;
  readonly sloTtftP99Ms: number;
  readonly sloSource: "flag" | "default";
  readonly policies: Readonly<Record<(typeof COMPARED)[number], PolicyFigures>>;
  /** prefix_aware's, and least_outstanding's beside it. */
  readonly hitRate: number;
  readonly baselineHitRate: number;
  /** (prefix_aware − least_outstanding) / least_outstanding × 100: negative is faster. */
  readonly ttftP50ChangePct: number;
  readonly ttftP99ChangePct: number;
  readonly prefillGpuSecondsSavedPerHour: number;
  readonly requestsPerInstanceAtSlo: Readonly<Record<(typeof COMPARED)[number], number>>;
  /** least_outstanding's instances minus prefix_aware's at the log's rate; null if either never met the SLO. */
  readonly instancesSaved: number | null;
  readonly simulatorRuns: number;
}

/** The default SLO for a window: DEFAULT_SLO_TTFT_P99_MS, raised for prompts too long to meet it. */
export function defaultSlo(promptTokens: ArrayLike<number>, prefillTokensPerSec: number): number {
  const p99 = percentile(sortedCopy(promptTokens), 99);
  const floor = Number.isFinite(p99)
    ? Math.ceil((SLO_PREFILL_HEADROOM * p99 * 10) / prefillTokensPerSec) * 100
    : 0;
  return Math.max(DEFAULT_SLO_TTFT_P99_MS, floor);
}

/** The same requests arriving `speed` times faster (keys, order and everything else unchanged). */
export function atSpeed(w: PreparedWorkload, speed: number): PreparedWorkload {
  if (speed === 1) return w;
  return { ...w, requests: w.requests.map((r) => ({ ...r, arrivalMs: r.arrivalMs / speed })) };
}

const changePct = (ours: number, base: number): number => (base > 0 ? ((ours - base) / base) * 100 : 0);

export function estimateFleet(window: Workload, opts: EstimateOptions): FleetEstimate {
  const prepared = prepareWorkload(window);
  const fleet: FleetConfig = { backends: opts.backends, kvCacheTokens: opts.kvTokens, seed: opts.seed };
  const most = COMPARED.length * opts.searchRuns;
  let runs = 0;
  const tick = (): void => opts.onRun?.(++runs, most);
  const base = runPolicies(prepared, fleet, COMPARED, tick);
  const reqs = prepared.requests;
  const span = reqs.length > 1 ? reqs[reqs.length - 1]!.arrivalMs - reqs[0]!.arrivalMs : 0;
  const windowRate = span > 0 ? (reqs.length / span) * 1000 : 0;
  const slo =
    opts.sloTtftP99Ms ??
    defaultSlo(
      reqs.map((r) => r.promptTokens),
      engineConfig(fleet, prepared.blockTokens).prefillTokensPerSec,
    );

  const figures = (p: SimPolicyName, r: PolicyResult): PolicyFigures => {
    const cap = searchCapacity(
      (speed) => {
        const run = simulatePolicy(
          atSpeed(prepared, speed),
          fleet,
          p,
          routerFactory(p, prepared.blockTokens),
          viewOf(p),
        );
        tick();
        return run.ttftP99Ms;
      },
      slo,
      opts.searchRuns,
      r.ttftP99Ms,
    );
    const perInstance = (windowRate * cap.speed) / opts.backends;
    return {
      hitRate: r.hitRate,
      ttftP50Ms: r.ttftP50Ms,
      ttftP99Ms: r.ttftP99Ms,
      prefillGpuSeconds: r.prefillGpuSeconds,
      requestsPerInstanceAtSlo: perInstance,
      capacityBound: cap.bound,
      instancesAtLogRate:
        perInstance > 0 && opts.logRatePerSec > 0 ? Math.ceil(opts.logRatePerSec / perInstance) : null,
    };
  };
  const byName = (name: SimPolicyName): PolicyResult => base.policies.find((p) => p.policy === name)!;
  const ours = figures(OURS, byName(OURS));
  const theirs = figures(BASELINE, byName(BASELINE));
  const rate = opts.logRatePerSec > 0 ? opts.logRatePerSec : windowRate;
  const savedPerRequest =
    reqs.length > 0 ? (theirs.prefillGpuSeconds - ours.prefillGpuSeconds) / reqs.length : 0;
  return {
    backends: opts.backends,
    kvTokens: opts.kvTokens,
    blockTokens: prepared.blockTokens,
    simulatedRequests: reqs.length,
    windowRatePerSec: windowRate,
    logRatePerSec: opts.logRatePerSec,
    oracleHitRate: base.oracle.hitRate,
    sloTtftP99Ms: slo,
    sloSource: opts.sloTtftP99Ms === undefined ? "default" : "flag",
    policies: { [OURS]: ours, [BASELINE]: theirs },
    hitRate: ours.hitRate,
    baselineHitRate: theirs.hitRate,
    ttftP50ChangePct: changePct(ours.ttftP50Ms, theirs.ttftP50Ms),
    ttftP99ChangePct: changePct(ours.ttftP99Ms, theirs.ttftP99Ms),
    prefillGpuSecondsSavedPerHour: savedPerRequest * rate * 3600,
    requestsPerInstanceAtSlo: {
      [OURS]: ours.requestsPerInstanceAtSlo,
      [BASELINE]: theirs.requestsPerInstanceAtSlo,
    },
    instancesSaved:
      ours.instancesAtLogRate !== null && theirs.instancesAtLogRate !== null
        ? theirs.instancesAtLogRate - ours.instancesAtLogRate
        : null,
    simulatorRuns: runs,
  };
}
