/**
 * The cells of one pool as a cell choice sees them (cell-chooser.ts): a
 * weighted consistent-hash ring over the cells, each cell's load as route
 * responses last reported it, and the bounded-load test.
 *
 * Probe order: the ring over the cells (a cell weighs what its backends
 * weigh), walked as the backend ring is (ring.ts): home first, then
 * key-seeded rehashes. Every isolate computes the same order, so a key's
 * second home is stable.
 *
 * Load: the Worker learns each cell's requests in flight from the route
 * responses it already gets, each relaying every cell's freshest figure
 * (RouteResult.cellLoads, cell-loads.ts), and keeps the latest per cell
 * (CellLoads). A cell may take a request while its figure is
 * under the bounded-load cap ceil(c · w_j/W · (T + 1)) (bounded-load.ts), T
 * the sum of the figures of the cells that ever reported, W their weight.
 * A figure older than CELL_LOAD_TTL_MS is no evidence of load: the cell
 * may take a request whatever it said (an avoided cell is tried again after
 * that long, and its answer refreshes the figure), and it counts as idle in
 * T. Both halves were measured on multi-turn chat at K = 2 (one isolate):
 * dropping old figures from T left the busy cell comparing itself with
 * itself; keeping them left a cell that had drained looking as busy as when
 * its families left it, and the other cell holding every family — 97% of
 * the load either way.
 */
import { boundedCap } from "./bounded-load";
import type { CellLoads } from "./cell-loads";
import { hashKey } from "./hash";
import { HashRing } from "./ring";
import type { BlockKey } from "./types";

/** Salts the cell ring's positions apart from the backend rings inside the cells, which hash the same keys. */
const CELL_RING_SALT = 0x5eed;

export class CellRing {
  readonly size: number;
  private readonly ring: HashRing;
  private readonly weights: readonly number[];

  constructor(weights: readonly number[]) {
    if (weights.length === 0) throw new RangeError("cells: need at least one");
    this.size = weights.length;
    this.weights = weights;
    this.ring = new HashRing(weights.map((weight, j) => ({ id: `cell-${j}`, weight })));
  }

  /** The cells in the key's probe order (home first). */
  order(key: BlockKey): Int32Array {
    return this.ring.order(hashKey(key, CELL_RING_SALT));
  }

  /** The key's home cell. */
  home(key: BlockKey): number {
    return this.ring.primary(hashKey(key, CELL_RING_SALT));
  }

  /**
   * Whether `cell` may take a request: its fresh figure under its
   * bounded-load cap among the cells that ever reported to this isolate
   * (fresh figures as they are, old ones as idle; their weight). A cell
   * without a fresh figure may: no evidence against it. A cell that never
   * reported does not count toward the average (counting it as idle would
   * make every home of a new isolate look over its cap).
   */
  underCap(
    cell: number,
    loads: CellLoads,
    balanceFactor: number,
    now: number,
    out?: (cell: number) => boolean,
  ): boolean {
    const load = loads.load(cell, now);
    if (load === undefined) return true;
    let total = 0;
    let weight = 0;
    for (let j = 0; j < this.size; j++) {
      // A cell passed over takes none of the load: the others share it (their caps are of the load they carry).
      if (!loads.reported(j) || out?.(j) === true) continue;
      total += loads.load(j, now) ?? 0;
      weight += this.weights[j]!;
    }
    return load < boundedCap(this.weights[cell]!, weight, total, balanceFactor);
  }

  /**
   * The first cell in the key's probe order under its cap, and whether any
   * cell before it was at its cap or passed over. When every cell is (only
   * possible with c < 1): the least loaded per weight, ties in probe order.
   * Cells `out` names (no usable backend, as their RouterDOs answered:
   * cell-chooser.ts) are passed over, and left out of the average the caps
   * are of, unless every cell is out: then none is (as before, the request
   * fails open where it would have gone).
   */
  firstUnderCap(
    key: BlockKey,
    loads: CellLoads,
    balanceFactor: number,
    now: number,
    out?: (cell: number) => boolean,
  ): { cell: number; skipped: boolean } {
    const order = this.order(key);
    let skip = out;
    if (skip !== undefined && order.every((j) => skip!(j))) skip = undefined;
    for (let r = 0; r < order.length; r++) {
      const j = order[r]!;
      if (skip?.(j) === true) continue;
      if (this.underCap(j, loads, balanceFactor, now, skip)) return { cell: j, skipped: r > 0 };
    }
    let best = -1;
    let bestLoad = Number.POSITIVE_INFINITY;
    for (const j of order) {
      if (skip?.(j) === true) continue;
      const l = (loads.load(j, now) ?? 0) / this.weights[j]!;
      if (best < 0 || l < bestLoad) {
        best = j;
        bestLoad = l;
      }
    }
    return { cell: best, skipped: true };
  }
}
