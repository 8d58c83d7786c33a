/**
 * A pool split into K cells: each cell a RouterDO that owns a disjoint
 * subset of the pool's backends (DESIGN.md, "Scale and geography"). This
 * module says which backend belongs to which cell, and how many cells a
 * pool needs. The Worker, the RouterDO's callers and the simulator all
 * take the assignment from here.
 *
 * Assignment (quantile arcs of a hash ring): each backend sits at
 * hashString(id) on a circle; walking the circle in that order, cell j takes
 * the backends whose weight midpoint falls in the j-th K-quantile of the
 * pool's total weight, with no cell left empty. So
 * - cells hold equal weight to within one backend's weight (equal weights:
 *   sizes differ by at most one), where rendezvous hashing of backends onto
 *   cells leaves sizes binomial (64 backends onto 8 cells: 4 to 13 is
 *   common) and can leave a cell empty;
 * - adding or removing one backend moves at most K − 1 others, one per
 *   quantile boundary it shifts, whatever the fleet size; every other
 *   backend keeps its cell, its affinity index and its leases;
 * - the order on the circle is the ids' hashes, so every replica computes
 *   the same cells from the same fleet, with no state.
 * Changing K itself re-cuts the arcs (about half the backends move from 4 to
 * 5 cells): K follows the fleet in steps, and a pool is re-cut rarely.
 *
 * Count: enough cells that none exceeds CELL_MAX_BACKENDS backends (the
 * throughput rule: each backend's requests cost its cell two calls, route and
 * complete, against Cloudflare's soft limit of ~1,000 requests/s per object)
 * and that every cell's affinity indexes fit CELL_INDEX_BUDGET_BYTES (the
 * memory rule), at most one cell per backend.
 */
import { CELL_INDEX_BUDGET_BYTES, CELL_MAX_BACKENDS, INDEX_BYTES_PER_KEY } from "./defaults";
import { hashString } from "./hash";
import type { BackendSpec } from "./types";

/** Salts a backend's position on the cell circle apart from its virtual nodes on a cell's backend ring. */
const CELL_SALT = 0x63656c6c;

/**
 * The cell of each backend, in the order given: out[i] ∈ [0, k). k must be an
 * integer within 1..backends.length; every cell gets at least one backend.
 */
export function assignCells(backends: readonly BackendSpec[], k: number): Int32Array {
  const n = backends.length;
  if (!Number.isInteger(k) || k < 1 || k > Math.max(1, n))
    throw new RangeError(`cells: must be an integer within 1..${Math.max(1, n)} (backends), got ${k}`);
  const out = new Int32Array(n);
  if (k === 1) return out;
  const pos = backends.map((b) => hashString(b.id, CELL_SALT));
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => {
    const d = pos[a]! - pos[b]!;
    if (d !== 0) return d;
    const ia = backends[a]!.id;
    const ib = backends[b]!.id;
    return ia < ib ? -1 : ia > ib ? 1 : 0;
  });
  let total = 0;
  for (const b of backends) total += b.weight;
  let before = 0;
  let prev = -1;
  for (let r = 0; r < n; r++) {
    const i = order[r]!;
    const w = backends[i]!.weight;
    const quantile = Math.min(k - 1, Math.floor((k * (before + w / 2)) / total));
    // Never skip a cell (a heavy backend's midpoint can jump two quantiles), and keep enough
    // backends for the cells still to fill: one each.
    const cell = Math.max(k - (n - r), Math.min(quantile, prev + 1));
    out[i] = cell;
    prev = cell;
    before += w;
  }
  return out;
}

/** Bytes the affinity indexes of these backends take when full, per copy (one per A/B arm and shadow). */
export function indexBytes(backends: readonly BackendSpec[], tokensPerKey: number): number {
  let keys = 0;
  for (const b of backends) keys += Math.max(1, Math.floor(b.kvCacheTokens / tokensPerKey));
  return keys * INDEX_BYTES_PER_KEY;
}

export interface CellCountInput {
  readonly backends: readonly BackendSpec[];
  /** ROUTER_CELLS: a number of cells, or "auto". */
  readonly cells: number | "auto";
  /** Tokens one index key stands for (blockTokens × indexStride: 64 by default). */
  readonly tokensPerKey: number;
  /** Affinity indexes per cell: one per A/B arm, one more with the shadow on. */
  readonly indexCopies: number;
}

/**
 * How many cells a pool gets: the configured number, or with "auto" the
 * fewest that keep every cell within CELL_MAX_BACKENDS backends and
 * CELL_INDEX_BUDGET_BYTES of index; never more than the pool has backends.
 */
export function cellCount(input: CellCountInput): number {
  const n = input.backends.length;
  if (n === 0) return 1;
  if (input.cells !== "auto") return Math.min(input.cells, n);
  const byThroughput = Math.ceil(n / CELL_MAX_BACKENDS);
  const bytes = indexBytes(input.backends, input.tokensPerKey) * input.indexCopies;
  const byMemory = Math.ceil(bytes / CELL_INDEX_BUDGET_BYTES);
  return Math.min(n, Math.max(1, byThroughput, byMemory));
}

/** The backends of each cell, in the pool's order. */
export function cellMembers<T extends BackendSpec>(
  backends: readonly T[],
  cellOf: Int32Array,
  k: number,
): T[][] {
  const out = Array.from({ length: k }, (): T[] => []);
  backends.forEach((b, i) => {
    out[cellOf[i]!]!.push(b);
  });
  return out;
}
