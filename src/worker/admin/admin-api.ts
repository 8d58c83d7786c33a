/**
 * The admin API (admin token): fleet-wide figures from each pool's RouterDO
 * (/admin/stats as JSON, /metrics as Prometheus text), the backends and
 * their state, drain / undrain of a backend in every pool that has it, and
 * a reset of a pool's affinity index. Errors are thrown as GatewayErrors and
 * rendered once by the app, in OpenAI's shape.
 */
import type { Context } from "hono";
import type { GatewayEnv } from "../app-types";
import { GatewayError, requireModel } from "../errors";
import type { AdminResult } from "../router/router-rpc";
import { METRICS_CONTENT_TYPE, metricsText } from "../stats/metrics-text";
import type { PoolSnapshot } from "../stats/pool-snapshot";
import { poolView } from "../stats/stats-view";
import { drainIn, poolStates, resetAffinityOf } from "./pool-admin";

/** GET /admin/stats: every pool's figures, with rates and quantiles worked out. */
export async function adminStats(c: Context<GatewayEnv>): Promise<Response> {
  const config = c.get("config");
  const states = await poolStates(c.env.ROUTER, config);
  const pools: Record<string, unknown> = {};
  for (const [model, s] of states) pools[model] = s.ok ? { ok: true, ...poolView(s.snapshot) } : s;
  return c.json({
    at: Date.now(),
    policy: config.router.policy,
    abPolicy: config.router.abPolicy,
    shadow: config.router.shadow,
    pools,
  });
}

/** GET /metrics: the same figures in the Prometheus text format. */
export async function metrics(c: Context<GatewayEnv>): Promise<Response> {
  const states = await poolStates(c.env.ROUTER, c.get("config"));
  const snapshots = new Map<string, PoolSnapshot>();
  for (const [model, s] of states) if (s.ok) snapshots.set(model, s.snapshot);
  return c.body(metricsText(snapshots), 200, { "content-type": METRICS_CONTENT_TYPE });
}

/** GET /admin/backends: each configured backend (no url, no key) and its state in each pool. */
export async function listBackends(c: Context<GatewayEnv>): Promise<Response> {
  const config = c.get("config");
  const states = await poolStates(c.env.ROUTER, config);
  const backends = config.backends.map((b) => ({
    id: b.id,
    models: b.models,
    weight: b.weight,
    kvCacheTokens: b.kvCacheTokens,
    ...(b.maxInflight !== undefined ? { maxInflight: b.maxInflight } : {}),
    pools: Object.fromEntries(
      b.models.map((m) => {
        const s = states.get(m);
        const row = s?.ok === true ? s.snapshot.backends.find((x) => x.id === b.id) : undefined;
        return [m, row ?? null];
      }),
    ),
  }));
  return c.json({ backends });
}

/** Throws the admin result's failure as an HTTP error. */
function check(r: AdminResult, what: string): void {
  if (r.ok) return;
  if (r.code === "last_backend")
    throw new GatewayError(409, "invalid_request_error", "last_backend", `${what}: ${r.message}.`);
  throw new GatewayError(404, "invalid_request_error", "backend_not_found", `${what}: ${r.message}.`, "id");
}

/** POST /admin/backends/:id/drain and /undrain: in every pool the backend serves. */
export function drainHandler(drained: boolean) {
  return async function drain(c: Context<GatewayEnv>): Promise<Response> {
    const config = c.get("config");
    const id = c.req.param("id") ?? "";
    const backend = config.backendsById.get(id);
    if (backend === undefined)
      throw new GatewayError(
        404,
        "invalid_request_error",
        "backend_not_found",
        `No backend '${id}' is configured.`,
        "id",
      );
    const pools: Record<string, readonly string[]> = {};
    for (const model of backend.models) {
      const r = await drainIn(c.env.ROUTER, config, model, id, drained);
      check(r, `pool '${model}'`);
      if (r.ok) pools[model] = r.drained;
    }
    return c.json({
      id,
      drained,
      pools: Object.fromEntries(Object.entries(pools).map(([m, d]) => [m, { drained: d }])),
    });
  };
}

/** POST /admin/pools/:model/reset-affinity: the pool forgets which backend caches what. */
export async function resetAffinity(c: Context<GatewayEnv>): Promise<Response> {
  const config = c.get("config");
  const model = c.req.param("model") ?? "";
  requireModel(config, model);
  check(await resetAffinityOf(c.env.ROUTER, config, model), `pool '${model}'`);
  return c.json({ model, reset: true });
}
