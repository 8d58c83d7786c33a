// Decision regret, the analysis: from collect.ts's decisions, the regret distribution, who in the tail was
// regretted, and which predicted term is most wrong where it matters (between the backends of one decision).
import { quantileOf as quantile } from "../audit-run";
import type { BackendAt, Decision } from "./collect";

/** Regret above this, ms, counts as a regretted decision. */
export const REGRET_MS = 10;

function argMin(at: readonly BackendAt[], which: (x: BackendAt) => boolean, by: (x: BackendAt) => number): number {
  let best = -1;
  for (let b = 0; b < at.length; b++) if (which(at[b]!) && (best < 0 || by(at[b]!) < by(at[best]!))) best = b;
  return best;
}

/** Per decision: the best backend by exact TTFT (any, and among the cost model's candidates), and the regrets. */
export interface Regret {
  d: Decision;
  best: number;
  bestCandidate: number;
  /** chosen − best, ms (exact TTFTs at the decision). */
  regret: number;
  /** chosen − best candidate, ms: what a better cost model alone could have won, bounds and hold back kept. */
  regretCandidate: number;
}

export function regretsOf(decisions: readonly Decision[]): Regret[] {
  return decisions.map((d) => {
    const best = argMin(d.at, () => true, (x) => x.ttft);
    const bestCandidate = argMin(d.at, (x) => x.candidate, (x) => x.ttft);
    const mine = d.at[d.chosen]!.ttft;
    return {
      d,
      best,
      bestCandidate,
      regret: mine - d.at[best]!.ttft,
      regretCandidate: bestCandidate < 0 ? 0 : Math.max(0, mine - d.at[bestCandidate]!.ttft),
    };
  });
}

export interface RegretSummary {
  decisions: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  /** Share of decisions with regret > REGRET_MS. */
  over: number;
  /** The same with the best among candidates. */
  overCandidate: number;
  p99Candidate: number;
  /** The slowest 1% by realized TTFT: how many, their TTFT floor, the share regretted (> REGRET_MS). */
  tail: number;
  tailFrom: number;
  tailOver: number;
  tailOverCandidate: number;
  /** Mean over the tail of regret ÷ realized TTFT: how much of a tail TTFT a better decision removes. */
  tailRegretShare: number;
  /** Chosen's exact TTFT at the decision against the realized one: median ratio (later arrivals' effect). */
  realizedOverExact: number;
}

export function summarize(rs: readonly Regret[]): RegretSummary {
  const regrets = rs.map((r) => r.regret);
  const cand = rs.map((r) => r.regretCandidate);
  const realized = rs.map((r) => r.d.realized);
  const tailFrom = quantile(realized, 0.99);
  const tail = rs.filter((r) => r.d.realized >= tailFrom);
  return {
    decisions: rs.length,
    p50: quantile(regrets, 0.5),
    p90: quantile(regrets, 0.9),
    p99: quantile(regrets, 0.99),
    mean: regrets.reduce((a, x) => a + x, 0) / Math.max(1, rs.length),
    over: regrets.filter((x) => x > REGRET_MS).length / Math.max(1, rs.length),
    overCandidate: cand.filter((x) => x > REGRET_MS).length / Math.max(1, rs.length),
    p99Candidate: quantile(cand, 0.99),
    tail: tail.length,
    tailFrom,
    tailOver: tail.filter((r) => r.regret > REGRET_MS).length / Math.max(1, tail.length),
    tailOverCandidate: tail.filter((r) => r.regretCandidate > REGRET_MS).length / Math.max(1, tail.length),
    tailRegretShare: tail.reduce((a, r) => a + r.regret / r.d.realized, 0) / Math.max(1, tail.length),
    realizedOverExact: quantile(
      rs.map((r) => r.d.realized / r.d.at[r.d.chosen]!.ttft),
      0.5,
    ),
  };
}

/** A feature of one backend at one decision, named. */
export interface Feature {
  readonly name: string;
  readonly of: (x: BackendAt, d: Decision) => number;
  /** Whether a gateway can know it (its own ledger and counts, or a scrape of the engine's /metrics). */
  readonly observable: boolean;
}

export const FEATURES: Record<string, Feature> = {
  start: { name: "predicted start (max of waits)", of: (x) => x.start, observable: true },
  queue: { name: "predicted queue wait", of: (x) => x.queueWait, observable: true },
  prefill: { name: "predicted prefill", of: (x) => x.prefill, observable: true },
  kv: { name: "kv term", of: (x) => x.kv, observable: true },
  ours: { name: "our requests in flight", of: (x) => x.ours, observable: true },
  running: { name: "engine running", of: (x) => x.running, observable: true },
  waiting: { name: "engine waiting", of: (x) => x.waiting, observable: true },
  decoding: { name: "engine decoding", of: (x) => x.decoding, observable: false },
  context: { name: "decode context (k tokens)", of: (x) => x.decodeContext / 1000, observable: false },
  stepWait: { name: "step in progress (wait to schedule)", of: (x) => x.stepWait, observable: false },
};

/** Least squares y ≈ X·β (no intercept: callers demean); β and R² against Σy². */
export function leastSquares(xs: readonly number[][], ys: readonly number[]): { beta: number[]; r2: number } {
  const p = xs[0]?.length ?? 0;
  const a = Array.from({ length: p }, () => new Array<number>(p + 1).fill(0));
  for (let k = 0; k < ys.length; k++) {
    const x = xs[k]!;
    for (let i = 0; i < p; i++) {
      for (let j = 0; j < p; j++) a[i]![j]! += x[i]! * x[j]!;
      a[i]![p]! += x[i]! * ys[k]!;
    }
  }
  // Gauss-Jordan with partial pivoting; a singular column (no spread) gets β = 0.
  for (let c = 0; c < p; c++) {
    let piv = c;
    for (let r = c + 1; r < p; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[piv]![c]!)) piv = r;
    [a[c], a[piv]] = [a[piv]!, a[c]!];
    const v = a[c]![c]!;
    if (Math.abs(v) < 1e-12) continue;
    for (let j = c; j <= p; j++) a[c]![j]! /= v;
    for (let r = 0; r < p; r++) {
      if (r === c) continue;
      const f = a[r]![c]!;
      if (f !== 0) for (let j = c; j <= p; j++) a[r]![j]! -= f * a[c]![j]!;
    }
  }
  const beta = a.map((row, i) => (Math.abs(row[i]!) < 1e-12 ? 0 : row[p]!));
  let ss = 0;
  let res = 0;
  for (let k = 0; k < ys.length; k++) {
    const fit = xs[k]!.reduce((s, x, j) => s + x * beta[j]!, 0);
    ss += ys[k]! ** 2;
    res += (ys[k]! - fit) ** 2;
  }
  return { beta, r2: ss > 0 ? 1 - res / ss : 0 };
}

/**
 * Within-decision rows: for each decision, each candidate's exact TTFT and features minus the decision's
 * mean over its candidates, so only what tells backends apart is left (what a choice turns on).
 */
export function withinRows(
  decisions: readonly Decision[],
  features: readonly Feature[],
  y: (x: BackendAt) => number = (x) => x.ttft,
): { xs: number[][]; ys: number[] } {
  const xs: number[][] = [];
  const ys: number[] = [];
  for (const d of decisions) {
    const c = d.at.filter((x) => x.candidate);
    if (c.length < 2) continue;
    const my = c.reduce((s, x) => s + y(x), 0) / c.length;
    const mx = features.map((f) => c.reduce((s, x) => s + f.of(x, d), 0) / c.length);
    for (const x of c) {
      ys.push(y(x) - my);
      xs.push(features.map((f, j) => f.of(x, d) - mx[j]!));
    }
  }
  return { xs, ys };
}

/** R² of the cost model's own total as the within-decision predictor (coefficient fixed at 1). */
export function costR2(decisions: readonly Decision[]): number {
  const { xs, ys } = withinRows(decisions, [{ name: "cost", of: (x) => x.cost, observable: true }]);
  let ss = 0;
  let res = 0;
  for (let k = 0; k < ys.length; k++) {
    ss += ys[k]! ** 2;
    res += (ys[k]! - xs[k]![0]!) ** 2;
  }
  return ss > 0 ? 1 - res / ss : 0;
}

/**
 * For the regretted decisions (regret among candidates > REGRET_MS): between the chosen backend and the best
 * candidate, the difference (chosen − best) of every predicted term and feature, and of the exact TTFT and
 * the predicted cost. Medians over the decisions: which term said "chosen is cheaper" while it was not.
 */
export function regrettedDifferences(
  rs: readonly Regret[],
): { count: number; median: Record<string, number>; mean: Record<string, number> } {
  const picked = rs.filter((r) => r.regretCandidate > REGRET_MS && r.bestCandidate >= 0);
  const names: Record<string, (x: BackendAt) => number> = {
    "exact TTFT": (x) => x.ttft,
    "predicted cost": (x) => x.cost,
    "queue wait": (x) => x.queueWait,
    "memory wait": (x) => x.memoryWait,
    "least (head) wait": (x) => x.leastWait,
    start: (x) => x.start,
    prefill: (x) => x.prefill,
    "kv term": (x) => x.kv,
    "in-flight term": (x) => x.inflightTerm,
    repeat: (x) => x.repeat,
    foreign: (x) => x.foreign,
    "ours in flight": (x) => x.ours,
    "engine running": (x) => x.running,
    "engine waiting": (x) => x.waiting,
    "engine decoding": (x) => x.decoding,
    "decode context (tokens)": (x) => x.decodeContext,
    "step in progress (wait to schedule)": (x) => x.stepWait,
  };
  const median: Record<string, number> = {};
  const mean: Record<string, number> = {};
  for (const [k, f] of Object.entries(names)) {
    const diffs = picked.map((r) => f(r.d.at[r.d.chosen]!) - f(r.d.at[r.bestCandidate]!));
    median[k] = quantile(diffs, 0.5);
    mean[k] = diffs.reduce((a, x) => a + x, 0) / Math.max(1, diffs.length);
  }
  return { count: picked.length, median, mean };
}

/**
 * Decision by decision on the same trajectory (no re-simulation: later decisions as they were), the regret
 * had each decision gone to the candidate with the least `score`: which change of the cost would have chosen
 * better where it was chosen. Mean regret and the share over REGRET_MS; ties and the ring's order ignored.
 */
export function rescoredRegret(
  decisions: readonly Decision[],
  score: (x: BackendAt, d: Decision) => number,
): { mean: number; over: number; p90: number } {
  const regrets: number[] = [];
  for (const d of decisions) {
    const pick = argMin(d.at, (x) => x.candidate, (x) => score(x, d));
    if (pick < 0) continue;
    const best = argMin(d.at, () => true, (x) => x.ttft);
    regrets.push(d.at[pick]!.ttft - d.at[best]!.ttft);
  }
  return {
    mean: regrets.reduce((a, x) => a + x, 0) / Math.max(1, regrets.length),
    over: regrets.filter((x) => x > REGRET_MS).length / Math.max(1, regrets.length),
    p90: quantile(regrets, 0.9),
  };
}
