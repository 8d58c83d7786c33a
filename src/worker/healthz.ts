/**
 * GET /healthz. Public for liveness and config validity only: whoever can
 * reach the URL learns that the gateway runs and whether its config is
 * valid (if not, which vars to fix: config-invalid.ts), nothing about the
 * fleet. An invalid config's reasons (they name backends and models), the
 * config summary (models, backend count, policy and its settings) and
 * per-pool router stats (backend ids, health, in-flight, affinity counters,
 * the backend check's findings — never urls or keys) need the ADMIN_TOKEN as
 * a Bearer. Each pool says since when its figures count: `instanceStartedAt`
 * for what its RouterDO keeps in memory (decisions, the affinity index,
 * leases: an object evicted when idle starts them over), `countingSince`
 * for the arms' stored figures, which go on across evictions (/admin/stats).
 */
import type { Context } from "hono";
import type { LocationHint } from "../routing/defaults";
import type { GatewayEnv } from "./app-types";
import { bearerToken, tokenMatches } from "./auth";
import { type GatewayConfig, loadConfig } from "./config";
import { invalidVars, isAdminOfInvalid, reasonsWhere } from "./config-invalid";
import { adminInput, type Cell } from "./router/pool-cells";
import { poolFor, routerStub } from "./router/router-client";
import type { StatsResult } from "./router/router-rpc";

type CellHealth = StatsResult | { ok: false; code: "router_unavailable"; message: string };
/** One RouterDO's stats when the pool is one cell (as before cells); each cell's, by RouterDO name, otherwise. */
type PoolHealth = CellHealth | { ok: true; cells: Record<string, CellHealth> };

export async function healthz(c: Context<GatewayEnv>): Promise<Response> {
  const result = await loadConfig(c.env);
  if (!result.ok) {
    const admin = await isAdminOfInvalid(c.env, result.errors, c.req.header("authorization"));
    const vars = invalidVars(result.errors);
    const config = admin
      ? { ok: false, invalid: vars, errors: result.errors }
      : { ok: false, invalid: vars, reasons: reasonsWhere(vars) };
    return c.json({ status: "error", config }, 503);
  }
  const config = result.config;
  const admin = await tokenMatches(bearerToken(c.req.header("authorization")), [config.adminTokenDigest]);
  if (!admin) return c.json({ status: "ok", config: { ok: true } });
  return c.json({
    status: "ok",
    config: {
      ok: true,
      backends: config.backends.length,
      models: config.models,
      policy: config.router.policy,
      prefixTokens: config.prefixTokens,
      // Who shares prefix affinity (PREFIX_SCOPE): what a key can learn of another's prompts depends on it.
      prefixScope: config.prefixScope,
      blockTokens: config.router.blockTokens,
      balanceFactor: config.router.balanceFactor,
    },
    pools: await poolHealth(c, config),
  });
}

/** Each pool's RouterDO stats (each cell's); a RouterDO that cannot be reached says so instead. */
async function poolHealth(
  c: Context<GatewayEnv>,
  config: GatewayConfig,
): Promise<Record<string, PoolHealth>> {
  const pools: Record<string, PoolHealth> = {};
  await Promise.all(
    config.models.map(async (model) => {
      const pool = await poolFor(config, model);
      const cells = await Promise.all(
        pool.cells.map((cell) => cellHealth(c.env.ROUTER, cell, config.locationHint)),
      );
      pools[model] =
        cells.length === 1
          ? cells[0]!
          : { ok: true, cells: Object.fromEntries(pool.cells.map((cell, i) => [cell.name, cells[i]!])) };
    }),
  );
  return pools;
}

async function cellHealth(
  ns: Env["ROUTER"],
  cell: Cell,
  hint: LocationHint | undefined,
): Promise<CellHealth> {
  try {
    return await routerStub(ns, cell, hint).stats(adminInput(cell));
  } catch (err) {
    return {
      ok: false,
      code: "router_unavailable",
      message: err instanceof Error ? err.message : String(err),
    };
  }
}
