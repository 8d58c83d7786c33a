/**
 * A model pool as RouterDO cells (src/routing/cells.ts): how many, which
 * backends each owns, each cell's spec and fleet version, and the name of
 * its RouterDO. A cell is routed exactly as a whole pool was: its RouterDO
 * gets a PoolSpec holding only its backends and keeps one exact view of
 * them (leases, health, affinity); nothing in the object knows it is a cell.
 *
 * K = 1 is the single RouterDO of before, to the byte: the object is named
 * by the model, its spec is the pool's spec and its version the pool's.
 * With K > 1 a cell's name carries K, so re-cutting the pool (a new K)
 * starts fresh objects rather than handing a cell another cell's backends
 * under the same name; the old objects keep nothing but their alarm.
 */
import { assignCells, cellCount, cellMembers } from "../../routing/cells";
import { defaultIndexStride } from "../../routing/router-options";
import { sha256Hex } from "../sha256";
import type { AdminInput, PoolSpec } from "./router-rpc";

/** One cell of a pool: the RouterDO `name` routes over `spec` (its backends only), fleet version `version`. */
export interface Cell {
  readonly name: string;
  readonly index: number;
  readonly spec: PoolSpec;
  readonly version: string;
}

/** A pool spec's fleet version: the hash every route call carries. */
export function specVersion(spec: PoolSpec): Promise<string> {
  return sha256Hex(JSON.stringify(spec), 8);
}

/** The RouterDO name of cell `index` of `k`: the model itself when the pool is one cell. */
export function cellName(model: string, index: number, k: number): string {
  return k === 1 ? model : `${model} cell ${index + 1}/${k}`;
}

/** Affinity indexes each cell keeps: one per A/B arm, one more for the shadow. */
function indexCopies(spec: PoolSpec): number {
  return (spec.abPolicy === null ? 1 : 2) + (spec.shadow ? 1 : 0);
}

/** The pool's cells under ROUTER_CELLS = `cells` (a number or auto). */
export async function poolCells(
  model: string,
  spec: PoolSpec,
  version: string,
  cells: number | "auto",
): Promise<Cell[]> {
  const k = cellCount({
    backends: spec.backends,
    cells,
    tokensPerKey: spec.blockTokens * defaultIndexStride(spec.blockTokens),
    indexCopies: indexCopies(spec),
  });
  if (k === 1) return [{ name: model, index: 0, spec, version }];
  const members = cellMembers(spec.backends, assignCells(spec.backends, k), k);
  return Promise.all(
    members.map(async (backends, index) => {
      const cellSpec: PoolSpec = { ...spec, backends };
      return { name: cellName(model, index, k), index, spec: cellSpec, version: await specVersion(cellSpec) };
    }),
  );
}

/** The cell that owns `backendId`, if any. */
export function cellOwning(cells: readonly Cell[], backendId: string): Cell | undefined {
  return cells.find((c) => c.spec.backends.some((b) => b.id === backendId));
}

/**
 * What an admin call sends a cell's RouterDO: the cell's spec and version, so the object takes the fleet in
 * force (a read as a change: a cell no request has reached since a BACKENDS change would show the old one).
 */
export function adminInput(cell: Cell): AdminInput {
  return { fleetVersion: cell.version, spec: cell.spec };
}
