/**
 * What a Worker isolate, or a cell, knows of every cell's load: per cell the
 * latest requests-in-flight figure and when it was taken (cell-ring.ts
 * bounds a cell by these figures).
 *
 * Why the figures travel (relayed evidence): an isolate sees only its share
 * of the traffic, so on its own it hears from a cell 1/N as often as one
 * isolate of N would, and most of its figures are too old to count — with
 * eight isolates the load bound rarely acted and the isolates disagreed on
 * which cell was over it (bench/results/scale.md, "Cells"). So every route
 * call carries the isolate's figures to the cell, the cell keeps the
 * freshest it was ever told of each cell and sets its own exactly, and the
 * response carries that back: each cell relays what every isolate told it,
 * and any one response gives an isolate every cell's figure about as fresh
 * as the pool's whole traffic keeps it, not its own share. Nothing is shared
 * but what the calls already carry.
 *
 * On the wire a figure travels with its age, not its time, so the two ends'
 * clocks never meet (Workers and Durable Objects run on different machines);
 * transit time is ignored (milliseconds, against a TTL of a second).
 */
import { CELL_LOAD_TTL_MS } from "./defaults";

/** Per cell [inflight, ageMs]; age −1 for a cell never heard of. */
export type CellLoadWire = readonly number[];

export class CellLoads {
  private readonly inflight: Float64Array;
  private readonly at: Float64Array;

  constructor(
    readonly size: number,
    readonly ttlMs: number = CELL_LOAD_TTL_MS,
  ) {
    this.inflight = new Float64Array(size);
    this.at = new Float64Array(size).fill(Number.NEGATIVE_INFINITY);
  }

  /** `cell` had `inflight` requests in flight at `now` (from its route response, or the cell itself). */
  report(cell: number, inflight: number, now: number): void {
    this.inflight[cell] = inflight;
    this.at[cell] = now;
  }

  /** The cell's figure if it is fresh, else undefined (no evidence: the cell may take a request). */
  load(cell: number, now: number): number | undefined {
    return now - this.at[cell]! <= this.ttlMs ? this.inflight[cell]! : undefined;
  }

  /** Whether this view ever heard of the cell. */
  reported(cell: number): boolean {
    return this.at[cell] !== Number.NEGATIVE_INFINITY;
  }

  /** Every figure with its age at `now`, for the other end of a route call. */
  toWire(now: number): number[] {
    const out = new Array<number>(2 * this.size);
    for (let j = 0; j < this.size; j++) {
      const known = this.reported(j);
      out[2 * j] = known ? this.inflight[j]! : 0;
      out[2 * j + 1] = known ? Math.max(0, now - this.at[j]!) : -1;
    }
    return out;
  }

  /**
   * Takes each figure of `wire` that is fresher than this view's own. A wire
   * of another size (the other end counts other cells: a re-cut pool) is
   * ignored whole; so is anything malformed, as a figure is only a hint.
   */
  merge(wire: CellLoadWire, now: number): void {
    if (wire.length !== 2 * this.size) return;
    for (let j = 0; j < this.size; j++) {
      const inflight = wire[2 * j]!;
      const age = wire[2 * j + 1]!;
      if (!(age >= 0) || !(inflight >= 0) || !Number.isFinite(inflight)) continue;
      const at = now - age;
      if (at > this.at[j]!) this.report(j, inflight, at);
    }
  }
}

/**
 * A cell's side of one route call: takes the caller's figures, sets its own
 * (exact: `inflight`, this request included) and returns what it now knows
 * of every cell, for the response. The RouterDO and the simulator both run it.
 */
export function relayCellLoads(
  view: CellLoads,
  cell: number,
  inflight: number,
  incoming: CellLoadWire | undefined,
  now: number,
): number[] {
  if (incoming !== undefined) view.merge(incoming, now);
  view.report(cell, inflight, now);
  return view.toWire(now);
}
