/**
 * The admin side of the RouterDO contract: each pool's snapshot, merged
 * over its cells (mergeSnapshots: the cells own disjoint backends, so the
 * merge is the pool), and the operator's changes, sent with the cell's
 * spec so a cell no request has reached yet can take them: a drain to the
 * cell owning the backend, a reset of the affinity index to every cell.
 */
import type { GatewayConfig } from "../config";
import { cellOwning } from "../router/pool-cells";
import { type Pool, poolFor, routerStub } from "../router/router-client";
import type { AdminResult } from "../router/router-rpc";
import type { PoolSnapshot } from "../stats/pool-snapshot";
import { mergeSnapshots } from "../stats/snapshot-merge";

export type PoolState =
  | { readonly ok: true; readonly snapshot: PoolSnapshot }
  | { readonly ok: false; readonly code: "no_fleet" | "router_unavailable"; readonly message: string };

/** One pool's figures, merged over its cells. */
export async function poolState(ns: Env["ROUTER"], config: GatewayConfig, model: string): Promise<PoolState> {
  try {
    const pool = await poolFor(config, model);
    const results = await Promise.all(
      pool.cells.map((cell) => routerStub(ns, cell, config.locationHint).snapshot()),
    );
    let merged: PoolSnapshot | undefined;
    for (const r of results) {
      if (!r.ok) continue;
      merged = merged === undefined ? r.snapshot : mergeSnapshots(merged, r.snapshot);
    }
    if (merged === undefined)
      return { ok: false, code: "no_fleet", message: "no request has reached this pool yet" };
    return { ok: true, snapshot: merged };
  } catch (err) {
    return {
      ok: false,
      code: "router_unavailable",
      message: err instanceof Error ? err.message : String(err),
    };
  }
}

/** Every pool's state, by model. */
export async function poolStates(ns: Env["ROUTER"], config: GatewayConfig): Promise<Map<string, PoolState>> {
  const states = await Promise.all(config.models.map((m) => poolState(ns, config, m)));
  return new Map(config.models.map((m, i) => [m, states[i]!]));
}

/** Drains or undrains a backend in one pool. */
export async function drainIn(
  ns: Env["ROUTER"],
  config: GatewayConfig,
  model: string,
  backendId: string,
  drained: boolean,
): Promise<AdminResult> {
  const pool: Pool = await poolFor(config, model);
  const cell = cellOwning(pool.cells, backendId);
  if (cell === undefined)
    return { ok: false, code: "unknown_backend", message: `backend ${backendId} is not in the pool` };
  const r = await routerStub(ns, cell, config.locationHint).drain({
    fleetVersion: cell.version,
    spec: cell.spec,
    backendId,
    drained,
  });
  // The RouterDO does not know it is a cell, so its refusal says "the pool"; with cells it is the cell
  // that would be left with none (other cells' backends do not take its requests), and the operator
  // needs to know which backends share it.
  if (!r.ok && r.code === "last_backend" && pool.cells.length > 1)
    return {
      ...r,
      message:
        `draining it would leave its cell no backend in rotation (ROUTER_CELLS cuts this pool into ` +
        `${pool.cells.length} RouterDO cells, each routing only its own backends; this one holds ` +
        `${cell.spec.backends.map((b) => b.id).join(", ")})`,
    };
  return r;
}

/** Forgets a pool's affinity index. */
export async function resetAffinityOf(
  ns: Env["ROUTER"],
  config: GatewayConfig,
  model: string,
): Promise<AdminResult> {
  const pool = await poolFor(config, model);
  const results = await Promise.all(
    pool.cells.map((cell) =>
      routerStub(ns, cell, config.locationHint).resetAffinity({
        fleetVersion: cell.version,
        spec: cell.spec,
      }),
    ),
  );
  const drained: string[] = [];
  for (const r of results) {
    if (!r.ok) return r;
    drained.push(...r.drained);
  }
  return { ok: true, drained };
}
