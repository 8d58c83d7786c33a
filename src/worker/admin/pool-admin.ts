/**
 * The admin side of the RouterDO contract: each pool's snapshot (one
 * RouterDO per pool today; a pool split into cells would merge theirs with
 * mergeSnapshots), and the operator's changes, sent with the pool's spec so
 * a pool no request has reached yet can take them.
 */
import type { LocationHint } from "../../routing/defaults";
import type { GatewayConfig } from "../config";
import { type Pool, poolFor, routerStub } from "../router/router-client";
import type { AdminResult } from "../router/router-rpc";
import type { PoolSnapshot } from "../stats/pool-snapshot";
import { mergeSnapshots } from "../stats/snapshot-merge";

export type PoolState =
  | { readonly ok: true; readonly snapshot: PoolSnapshot }
  | { readonly ok: false; readonly code: "no_fleet" | "router_unavailable"; readonly message: string };

/** The RouterDO cells of a pool: one per pool today (router-client.ts routerStub). */
function cellsOf(ns: Env["ROUTER"], model: string, hint: LocationHint | undefined) {
  return [routerStub(ns, model, hint)];
}

/** One pool's figures, merged over its cells. */
export async function poolState(
  ns: Env["ROUTER"],
  model: string,
  hint: LocationHint | undefined,
): Promise<PoolState> {
  try {
    const results = await Promise.all(cellsOf(ns, model, hint).map((stub) => stub.snapshot()));
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
  const states = await Promise.all(config.models.map((m) => poolState(ns, m, config.locationHint)));
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
  return routerStub(ns, model, config.locationHint).drain({
    fleetVersion: pool.version,
    spec: pool.spec,
    backendId,
    drained,
  });
}

/** Forgets a pool's affinity index. */
export async function resetAffinityOf(
  ns: Env["ROUTER"],
  config: GatewayConfig,
  model: string,
): Promise<AdminResult> {
  const pool = await poolFor(config, model);
  return routerStub(ns, model, config.locationHint).resetAffinity({
    fleetVersion: pool.version,
    spec: pool.spec,
  });
}
