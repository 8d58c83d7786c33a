/**
 * The highest replay speed at which a policy keeps TTFT p99 within the SLO,
 * in a bounded number of simulator runs: double (or halve) from speed 1
 * until the SLO is crossed, then bisect geometrically between the last
 * speed that met it and the first that did not, until the two are within
 * 5% or the runs are spent. Assumes p99 grows with the rate, which holds for
 * a FCFS fleet up to simulation noise.
 */

export const MIN_SPEED = 1 / 64;
export const MAX_SPEED = 256;
const RESOLUTION = 1.05;

export interface CapacityResult {
  /** Highest speed that met the SLO; 0 when none did, down to MIN_SPEED. */
  readonly speed: number;
  /** "exact": bracketed within the resolution or the runs; "atLeast": met at the highest speed tried. */
  readonly bound: "exact" | "atLeast" | "none";
  /** Speeds tried, with their p99, in order. */
  readonly runs: readonly { readonly speed: number; readonly p99Ms: number }[];
}

/**
 * `p99At(speed)` runs the simulator; `first` is a run already made at speed 1
 * (it counts against `maxRuns`).
 */
export function searchCapacity(
  p99At: (speed: number) => number,
  sloMs: number,
  maxRuns: number,
  first?: number,
): CapacityResult {
  const runs: { speed: number; p99Ms: number }[] = [];
  let pass = 0;
  let fail = Number.POSITIVE_INFINITY;
  const tryAt = (speed: number): void => {
    const p99Ms = speed === 1 && first !== undefined && runs.length === 0 ? first : p99At(speed);
    runs.push({ speed, p99Ms });
    if (p99Ms <= sloMs) pass = Math.max(pass, speed);
    else fail = Math.min(fail, speed);
  };
  tryAt(1);
  while (runs.length < maxRuns) {
    let next: number;
    if (pass === 0) next = fail / 2;
    else if (fail === Number.POSITIVE_INFINITY) next = pass * 2;
    else if (fail / pass <= RESOLUTION) break;
    else next = Math.sqrt(pass * fail);
    if (next < MIN_SPEED || next > MAX_SPEED) break;
    tryAt(next);
  }
  const bound = pass === 0 ? "none" : fail === Number.POSITIVE_INFINITY ? "atLeast" : "exact";
  return { speed: pass, bound, runs };
}
