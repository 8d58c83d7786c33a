/**
 * Tuning and scoring sets: parameters are chosen on the tuning set, claims
 * are scored on the scoring set, which tuning never sees (issue #11: seven
 * tuning steps had each been judged on the reports they were scored on).
 *
 * - tuning: seeds 1–2 of the synthetic workloads that existed when the sets
 *   were drawn (TUNING_WORKLOADS), and the first half of a trace (by arrival
 *   order: Mooncake's first 6,015 of 12,031 requests).
 * - scoring: seeds 3–5 of every synthetic workload, those added since
 *   included (they were never tuned on), and the second half of a trace,
 *   its arrivals rebased to start at 0 on a cold fleet, as the first half does.
 *
 * A run belongs to a set by the data it replays, not by a flag: a report
 * states the set its requests came from (`describeSet`), "neither" included
 * (a seed outside both, or a whole trace, which spans both halves).
 * `--set NAME` on bench:sim and bench:sweep picks that set's data: its first
 * seed unless --seed names another of its seeds, or its half of a trace.
 */
import { isTraceSpec, loadWorkload, type WorkloadArgs } from "./workloads/index";
import type { Workload, WorkloadRequest } from "./workloads/types";

export const SET_NAMES = ["tuning", "scoring"] as const;
export type SetName = (typeof SET_NAMES)[number];

/** The synthetic workloads of the tuning set; any other synthetic workload is scored only. */
export const TUNING_WORKLOADS: readonly string[] = [
  "generated-shared-prefix",
  "multi-turn",
  "zipf",
  "no-shared-prefix",
];

export const SET_SEEDS: Readonly<Record<SetName, readonly number[]>> = {
  tuning: [1, 2],
  scoring: [3, 4, 5],
};

/** Which half of a trace each set replays. */
export const SET_TRACE_HALF: Readonly<Record<SetName, "first" | "second">> = {
  tuning: "first",
  scoring: "second",
};

export function isSetName(name: string): name is SetName {
  return (SET_NAMES as readonly string[]).includes(name);
}

/** The data a run replays: a synthetic workload's seed, or a range of a trace's requests. */
export type RunData =
  | { readonly kind: "synthetic"; readonly workload: string; readonly seed: number }
  /** Requests [from, to) of a trace of `of` requests, in arrival order. */
  | { readonly kind: "trace"; readonly from: number; readonly to: number; readonly of: number };

/** Index of the first request of a trace's second half. */
export function traceMiddle(of: number): number {
  return Math.floor(of / 2);
}

/** The set whose data this is, or undefined when it is neither's (or both's). */
export function setOf(run: RunData): SetName | undefined {
  if (run.kind === "synthetic") {
    if (SET_SEEDS.scoring.includes(run.seed)) return "scoring";
    if (SET_SEEDS.tuning.includes(run.seed) && TUNING_WORKLOADS.includes(run.workload)) return "tuning";
    return undefined;
  }
  const mid = traceMiddle(run.of);
  if (run.to <= mid) return "tuning";
  if (run.from >= mid) return "scoring";
  return undefined;
}

const range = (xs: readonly number[]): string => `${xs[0]}–${xs[xs.length - 1]}`;

/** One line for a report: which set, and why. */
export function describeSet(run: RunData): string {
  const set = setOf(run);
  if (run.kind === "synthetic") {
    if (set === "scoring") return `scoring set (seed ${run.seed}; scoring seeds ${range(SET_SEEDS.scoring)})`;
    if (set === "tuning") return `tuning set (seed ${run.seed}; tuning seeds ${range(SET_SEEDS.tuning)})`;
    const why = TUNING_WORKLOADS.includes(run.workload)
      ? `seed ${run.seed} is neither a tuning (${range(SET_SEEDS.tuning)}) nor a scoring (${range(SET_SEEDS.scoring)}) seed`
      : `${run.workload} is scored only (seeds ${range(SET_SEEDS.scoring)}), and seed ${run.seed} is not a scoring seed`;
    return `neither set: ${why}`;
  }
  const span = `requests ${run.from + 1}–${run.to} of ${run.of}`;
  if (set === "tuning") return `tuning set (the trace's first half: ${span})`;
  if (set === "scoring") return `scoring set (the trace's second half: ${span}, arrivals rebased)`;
  return `neither set: ${span} spans the tuning (first) and scoring (second) halves`;
}

/**
 * The seed a run of `set` uses: `given` when it is one of the set's seeds
 * (an error otherwise), else the set's first; for a synthetic workload the
 * tuning set does not hold, an error.
 */
export function seedOfSet(set: SetName, workload: string, given: number | undefined): number {
  if (set === "tuning" && !TUNING_WORKLOADS.includes(workload))
    throw new RangeError(
      `${workload} is not in the tuning set (${TUNING_WORKLOADS.join(", ")}): score it only`,
    );
  const seeds = SET_SEEDS[set];
  if (given === undefined) return seeds[0]!;
  if (!seeds.includes(given))
    throw new RangeError(`seed ${given} is not in the ${set} set (seeds ${range(seeds)})`);
  return given;
}

/** One half of a trace (arrival order), the second rebased to start at 0, with the range it covers. */
export function traceHalf(
  w: Workload,
  half: "first" | "second",
): { readonly workload: Workload; readonly run: RunData & { kind: "trace" } } {
  const of = w.requests.length;
  const mid = traceMiddle(of);
  const [from, to] = half === "first" ? [0, mid] : [mid, of];
  let requests: readonly WorkloadRequest[] = w.requests.slice(from, to);
  const t0 = requests[0]?.arrivalMs ?? 0;
  if (t0 !== 0) requests = requests.map((r) => ({ ...r, arrivalMs: r.arrivalMs - t0 }));
  return { workload: { ...w, requests }, run: { kind: "trace", from, to, of } };
}

export interface SetDataArgs extends Omit<WorkloadArgs, "requests"> {
  /** Request count (synthetic workloads that take one) or a cap (traces: of the set's half). */
  readonly requests?: number | undefined;
  readonly set?: SetName | undefined;
}

/**
 * A run's workload and the data it covers: a synthetic workload as
 * generated for `args.seed` (the caller has checked it against the set:
 * seedOfSet), or a trace, cut to the set's half, then to `requests`.
 */
export async function loadSetData(
  spec: string,
  args: SetDataArgs,
): Promise<{ readonly workload: Workload; readonly run: RunData }> {
  const { requests, set, ...rest } = args;
  if (!isTraceSpec(spec)) {
    const workload = await loadWorkload(spec, { ...rest, ...(requests !== undefined ? { requests } : {}) });
    return { workload, run: { kind: "synthetic", workload: spec, seed: args.seed } };
  }
  let workload = await loadWorkload(spec, rest);
  let run: RunData & { kind: "trace" } = {
    kind: "trace",
    from: 0,
    to: workload.requests.length,
    of: workload.requests.length,
  };
  if (set !== undefined) ({ workload, run } = traceHalf(workload, SET_TRACE_HALF[set]));
  if (requests !== undefined && requests < workload.requests.length) {
    workload = { ...workload, requests: workload.requests.slice(0, requests) };
    run = { ...run, to: run.from + requests };
  }
  return { workload, run };
}
