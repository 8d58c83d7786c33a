/**
 * The admin API (admin token): fleet-wide figures from each pool's RouterDO
 * (/admin/stats as JSON, /metrics as Prometheus text), the backends and
 * their state, drain / undrain of a backend in every pool that has it, and
 * a reset of a pool's affinity index. Errors are thrown as GatewayErrors and
 * rendered once by the app, in OpenAI's shape.
 */
import type { Context } from "hono";
import type { GatewayEnv } from "../app-types";
import type { GatewayConfig } from "../config";
import { GatewayError, quoteClient, requireModel } from "../errors";
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
    // Whether it is sent a cache_salt under PREFIX_SCOPE=key (its engine's cache split per key).
    cacheSalt: b.cacheSalt,
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

/** Throws the admin result's failure as an HTTP error; `note` (a sentence) follows its message. */
function check(r: AdminResult, what: string, note = ""): void {
  if (r.ok) return;
  const message = `${what}: ${r.message}.${note === "" ? "" : `${note}.`}`;
  if (r.code === "last_backend")
    throw new GatewayError(409, "invalid_request_error", "last_backend", message);
  throw new GatewayError(404, "invalid_request_error", "backend_not_found", message, "id");
}

const quoted = (models: readonly string[]) => models.map((m) => `pool '${m}'`).join(", ");

/** Puts the backend back to `drained` in each pool of `models`; returns the pools where that failed. */
async function undo(
  ns: Env["ROUTER"],
  config: GatewayConfig,
  models: readonly string[],
  id: string,
  drained: boolean,
): Promise<string[]> {
  const failed: string[] = [];
  for (const model of models) {
    const r = await drainIn(ns, config, model, id, drained).catch(() => undefined);
    if (r?.ok !== true) failed.push(model);
  }
  return failed;
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
        `No backend '${quoteClient(id)}' is configured.`,
        "id",
      );
    const pools: Record<string, readonly string[]> = {};
    // Pools this call moved the backend in, to undo if a later pool refuses: a 409 must mean nothing
    // changed, not "drained in some pools" (a drain is all of the backend's pools or none).
    const moved: string[] = [];
    // What the undo did, as a sentence for the error.
    const undoNote = async (): Promise<string> => {
      const kept = await undo(c.env.ROUTER, config, moved, id, !drained);
      return kept.length === 0
        ? moved.length === 0
          ? ""
          : ` Nothing was changed (undone in ${quoted(moved)})`
        : ` It stays ${drained ? "drained" : "in rotation"} in ${quoted(kept)}: the undo failed there`;
    };
    for (const model of backend.models) {
      let r: AdminResult;
      try {
        r = await drainIn(c.env.ROUTER, config, model, id, drained);
      } catch (err) {
        // A RouterDO that throws (unreachable, overloaded, reset) is undone as a refusal is: a 503 that says
        // nothing changed, not a 500 with the backend moved in the pools before this one.
        const note = await undoNote();
        const why = err instanceof Error ? err.message : String(err);
        throw new GatewayError(
          503,
          "service_unavailable",
          "router_unavailable",
          `pool '${model}': its RouterDO did not answer (${why}); try again.${note === "" ? "" : `${note}.`}`,
        );
      }
      if (!r.ok) check(r, `pool '${model}'`, await undoNote());
      if (r.ok) {
        pools[model] = r.drained;
        if (r.changed === true) moved.push(model);
      }
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
