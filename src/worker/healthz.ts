/**
 * GET /healthz. Public for liveness and config validity only: whoever can
 * reach the URL learns that the gateway runs and whether its config is
 * valid, nothing about the fleet. The config summary (models, backend count, policy and its settings) and per-pool
 * router stats (backend ids, health, in-flight, affinity counters — never
 * urls or keys) need the ADMIN_TOKEN as a Bearer.
 */
import type { Context } from "hono";
import type { GatewayEnv } from "./app-types";
import { bearerToken, tokenMatches } from "./auth";
import { type GatewayConfig, loadConfig } from "./config";
import { routerStub } from "./router/router-client";
import type { StatsResult } from "./router/router-rpc";

type PoolHealth = StatsResult | { ok: false; code: "router_unavailable"; message: string };

export async function healthz(c: Context<GatewayEnv>): Promise<Response> {
  const result = await loadConfig(c.env);
  if (!result.ok) {
    return c.json({ status: "error", config: { ok: false, errors: result.errors } }, 503);
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
      blockTokens: config.router.blockTokens,
      balanceFactor: config.router.balanceFactor,
    },
    pools: await poolHealth(c, config),
  });
}

/** Each pool's RouterDO stats; a pool whose RouterDO cannot be reached says so instead. */
async function poolHealth(
  c: Context<GatewayEnv>,
  config: GatewayConfig,
): Promise<Record<string, PoolHealth>> {
  const pools: Record<string, PoolHealth> = {};
  await Promise.all(
    config.models.map(async (model) => {
      try {
        pools[model] = await routerStub(c.env.ROUTER, model, config.locationHint).stats();
      } catch (err) {
        pools[model] = {
          ok: false,
          code: "router_unavailable",
          message: err instanceof Error ? err.message : String(err),
        };
      }
    }),
  );
  return pools;
}
