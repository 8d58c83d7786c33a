/**
 * Model pools and the Worker side of the RouterDO contract. A pool is the
 * set of backends serving one model; its spec (no secrets) is hashed into a
 * fleet version that rides along with every route() call, so a changed
 * BACKENDS secret reaches the RouterDO on the next request, with no
 * redeploy and no extra round trip in the steady state.
 */
import type { PoolSpec, RouteInput, RouteResult } from "../durable-objects/rpc";
import type { GatewayConfig } from "./config";
import { GatewayError, noHealthyBackend } from "./errors";

export interface Pool {
  readonly model: string;
  readonly spec: PoolSpec;
  readonly version: string;
}

async function hashHex(text: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  let hex = "";
  for (let i = 0; i < 8; i++) hex += d[i]!.toString(16).padStart(2, "0");
  return hex;
}

const poolsByConfig = new WeakMap<GatewayConfig, Map<string, Promise<Pool>>>();

/** The pool of `model` under `config` (memoized per config object, i.e. per secret version). */
export function poolFor(config: GatewayConfig, model: string): Promise<Pool> {
  let pools = poolsByConfig.get(config);
  if (pools === undefined) {
    pools = new Map();
    poolsByConfig.set(config, pools);
  }
  let pool = pools.get(model);
  if (pool === undefined) {
    const spec: PoolSpec = {
      backends: config.backends
        .filter((b) => b.models.includes(model))
        .map((b) => ({ id: b.id, url: b.url, weight: b.weight, kvCacheTokens: b.kvCacheTokens })),
      ...config.router,
    };
    pool = hashHex(JSON.stringify(spec)).then((version) => ({ model, spec, version }));
    pools.set(model, pool);
  }
  return pool;
}

/**
 * The RouterDO of a pool. One object per model today; DESIGN.md "Scale"
 * splits a hot pool into shards by ring key, which changes only this name.
 */
export function routerStub(ns: Env["ROUTER"], model: string) {
  return ns.getByName(model);
}

export type RouterStub = ReturnType<typeof routerStub>;

/** Fleet versions this isolate has seen a RouterDO accept; others are sent with their spec. */
const confirmed = new Set<string>();

function isRetryableRpcError(err: unknown): boolean {
  // Durable Object errors carry .retryable / .overloaded; retrying an overloaded object only adds load.
  if (typeof err !== "object" || err === null) return false;
  const e = err as { retryable?: unknown; overloaded?: unknown };
  return e.retryable === true && e.overloaded !== true;
}

export type RouteOk = Extract<RouteResult, { ok: true }>;

/** Routes through the pool's RouterDO: sends the spec when needed, retries a transient RPC failure once. */
export async function routeVia(
  stub: RouterStub,
  pool: Pool,
  req: Omit<RouteInput, "fleetVersion" | "spec">,
): Promise<RouteOk> {
  const key = `${pool.model}\u0000${pool.version}`;
  let withSpec = !confirmed.has(key);
  for (let attempt = 0; attempt < 3; attempt++) {
    const input: RouteInput = {
      ...req,
      fleetVersion: pool.version,
      ...(withSpec ? { spec: pool.spec } : {}),
    };
    let res: RouteResult;
    try {
      res = await stub.route(input);
    } catch (err) {
      if (attempt === 0 && isRetryableRpcError(err)) continue;
      throw new GatewayError(
        503,
        "service_unavailable",
        "router_unavailable",
        "The routing service is unavailable.",
      );
    }
    if (res.ok) {
      confirmed.add(key);
      return res;
    }
    if (res.code === "fleet_stale" && !withSpec) {
      withSpec = true;
      continue;
    }
    if (res.code === "no_healthy_backend") throw noHealthyBackend(pool.model);
    throw new GatewayError(503, "service_unavailable", "router_error", res.message);
  }
  throw new GatewayError(
    503,
    "service_unavailable",
    "router_unavailable",
    "The routing service is unavailable.",
  );
}
