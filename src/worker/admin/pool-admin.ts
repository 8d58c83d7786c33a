/**
 * The admin side of the RouterDO contract: each pool's snapshot, merged
 * over its cells (mergeSnapshots: the cells own disjoint backends, so the
 * merge is the pool), and the operator's changes, sent with the cell's
 * spec so a cell no request has reached yet can take them: a drain to the
 * cell owning the backend, a reset of the affinity index to every cell.
 */
import type { GatewayConfig } from "../config";
import { adminInput, type Cell, cellOwning } from "../router/pool-cells";
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
      pool.cells.map((cell) => routerStub(ns, cell, config.locationHint).snapshot(adminInput(cell))),
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
  // With cells, a drain may empty its cell while another cell has a backend in rotation: that cell takes the
  // emptied one's requests (its RouterDO answers no_usable, the cell chooser passes it over). The refusal is
  // the pool's: no backend in rotation in any cell. The other cells' state is read before the drain lands, so
  // two drains at once in two cells could each read the other in rotation and empty the pool: a drain with
  // cells holds the pool's drain lock (in its first cell) from that read to its answer. An undrain needs no lock:
  // it only puts a backend back.
  if (!drained || pool.cells.length === 1) return drainCell(ns, config, pool, cell, backendId, drained);
  const lock = routerStub(ns, pool.cells[0]!, config.locationHint);
  const holder = crypto.randomUUID();
  await takeDrainLock(lock, holder);
  try {
    return await drainCell(ns, config, pool, cell, backendId, drained);
  } finally {
    // A release that fails leaves the lock to its deadline.
    await lock.drainLock({ holder, ttlMs: DRAIN_LOCK_TTL_MS, release: true }).catch(() => {});
  }
}

/**
 * How long a drain may hold its pool's drain lock: far above a drain's two RouterDO calls; past it, a holder
 * that never released (its isolate died) no longer blocks the pool's drains.
 */
const DRAIN_LOCK_TTL_MS = 10_000;
/** A drain waits for the lock up to this (a dead holder's deadline, and then some), asking every 25 ms. */
const DRAIN_LOCK_WAIT_MS = DRAIN_LOCK_TTL_MS + 2_000;
const DRAIN_LOCK_POLL_MS = 25;

/** Takes the pool's drain lock in `lock` (its first cell's RouterDO) for `holder`, waiting while another holds it. */
async function takeDrainLock(lock: ReturnType<typeof routerStub>, holder: string): Promise<void> {
  const until = Date.now() + DRAIN_LOCK_WAIT_MS;
  for (;;) {
    const r = await lock.drainLock({ holder, ttlMs: DRAIN_LOCK_TTL_MS });
    if (r.ok) return;
    if (Date.now() >= until)
      throw new Error(`another drain of this pool still holds its drain lock (for ${r.heldForMs} ms more)`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(DRAIN_LOCK_POLL_MS, r.heldForMs)));
  }
}

/** The drain (or undrain) in the cell that owns the backend, the pool's rule checked against the other cells. */
async function drainCell(
  ns: Env["ROUTER"],
  config: GatewayConfig,
  pool: Pool,
  cell: Cell,
  backendId: string,
  drained: boolean,
): Promise<AdminResult> {
  const others =
    drained && pool.cells.length > 1 ? await otherCellsDrained(ns, config, pool, cell) : undefined;
  const r = await routerStub(ns, cell, config.locationHint).drain({
    fleetVersion: cell.version,
    spec: cell.spec,
    backendId,
    drained,
    ...(others?.inRotation === true ? { mayEmpty: true as const } : {}),
  });
  // The RouterDO does not know it is a cell, so its refusal names its own drained backends; the pool's are
  // those and the other cells'.
  if (!r.ok && r.code === "last_backend" && others !== undefined) {
    const held = [...cell.spec.backends.map((b) => b.id).filter((id) => id !== backendId), ...others.drained];
    return {
      ...r,
      message:
        `draining it would leave the pool no backend in rotation in any of its ${pool.cells.length} ` +
        `RouterDO cells (ROUTER_CELLS): undrain one of ${held.join(", ")} first (POST /admin/backends/{id}/undrain)`,
    };
  }
  return r;
}

/**
 * The other cells' drained backends, and whether any of their backends is in rotation (not drained): from
 * each cell's snapshot; a cell no request or admin call has reached holds none drained.
 */
async function otherCellsDrained(
  ns: Env["ROUTER"],
  config: GatewayConfig,
  pool: Pool,
  cell: Cell,
): Promise<{ inRotation: boolean; drained: string[] }> {
  const others = pool.cells.filter((c) => c !== cell);
  const snaps = await Promise.all(
    others.map((c) => routerStub(ns, c, config.locationHint).snapshot(adminInput(c))),
  );
  const drained: string[] = [];
  let inRotation = false;
  others.forEach((c, i) => {
    const s = snaps[i]!;
    const held = new Set(s.ok ? s.snapshot.backends.filter((b) => b.drained).map((b) => b.id) : []);
    for (const b of c.spec.backends) {
      if (held.has(b.id)) drained.push(b.id);
      else inRotation = true;
    }
  });
  return { inRotation, drained };
}

/** Forgets a pool's affinity index. */
export async function resetAffinityOf(
  ns: Env["ROUTER"],
  config: GatewayConfig,
  model: string,
): Promise<AdminResult> {
  const pool = await poolFor(config, model);
  const results = await Promise.all(
    pool.cells.map((cell) => routerStub(ns, cell, config.locationHint).resetAffinity(adminInput(cell))),
  );
  const drained: string[] = [];
  for (const r of results) {
    if (!r.ok) return r;
    drained.push(...r.drained);
  }
  return { ok: true, drained };
}
