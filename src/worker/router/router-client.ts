/**
 * The Worker side of the RouterDO contract: model pools, the route call, and
 * the outcome reports. A pool is the set of backends serving one model; its
 * spec (no secrets) is hashed into a fleet version that rides along with
 * every route() call, so a changed BACKENDS secret reaches the RouterDO on
 * the next request, with no redeploy and no extra round trip in the steady
 * state.
 *
 * The data plane never fails for the control plane's sake: the route call
 * has a deadline, and when it passes, or the object is overloaded or throws,
 * the request is decided in this isolate (local-router.ts, reason `local`)
 * and the isolate stops asking for a moment (a circuit breaker), so a down
 * RouterDO costs one deadline per isolate per second, not one per request.
 * A lease the RouterDO grants after the Worker stopped waiting is handed back
 * unused; a local decision's outcome is reported with observe() once the
 * stream ends. Nothing is counted twice.
 */

import type { RouteTicket } from "../../routing";
import type { LocationHint } from "../../routing/defaults";
import type { PolicyName, RouteReason, RouteRequest } from "../../routing/types";
import type { GatewayConfig } from "../config";
import { GatewayError } from "../errors";
import { placementOptions } from "../location-hint";
import { sha256Hex } from "../sha256";
import type { ArmLabel } from "../stats/pool-snapshot";
import { type LocalRouter, localRouterFor } from "./local-router";
import type {
  CompleteInput,
  FailureKind,
  ObserveInput,
  PoolSpec,
  RouteInput,
  RouteResult,
} from "./router-rpc";

export interface Pool {
  readonly model: string;
  readonly spec: PoolSpec;
  readonly version: string;
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
    pool = sha256Hex(JSON.stringify(spec), 8).then((version) => ({ model, spec, version }));
    pools.set(model, pool);
  }
  return pool;
}

/**
 * The RouterDO of a pool: one object per model. Splitting a hot pool into
 * cells (one RouterDO per disjoint subset of its backends, chosen by ring
 * key) would change only this name. `hint` (ROUTER_LOCATION_HINT) places the
 * object when this call creates it (location-hint.ts).
 */
export function routerStub(ns: Env["ROUTER"], model: string, hint: LocationHint | undefined) {
  return ns.getByName(model, placementOptions(hint));
}

export type RouterStub = ReturnType<typeof routerStub>;

/** How the Worker reached a decision, and what it must report at the end. */
export type Decision =
  | {
      readonly via: "router";
      readonly leaseId: string;
      readonly backendId: string;
      readonly reason: RouteReason;
      readonly expectedCachedTokens: number;
      readonly availableCachedTokens: number;
      readonly inflightAtDecision: number;
      readonly policy: PolicyName;
      readonly arm: ArmLabel;
      readonly shadow?: { readonly backendId: string; readonly expectedCachedTokens: number };
    }
  | {
      readonly via: "local";
      readonly ticket: RouteTicket;
      readonly local: LocalRouter;
      readonly routedAt: number;
      readonly backendId: string;
      readonly reason: "local";
      readonly expectedCachedTokens: number;
      readonly availableCachedTokens: number;
      readonly inflightAtDecision: number;
      readonly policy: PolicyName;
    };

/** A retry of a failed decision. */
export interface RetryOf {
  readonly decision: Decision;
  readonly failure: FailureKind;
  readonly retryAfterMs?: number;
}

/** After a failed route call, this isolate decides alone for this long before asking again. */
export const ROUTER_BACKOFF_MS = 1000;
/** A report (complete, observe) waits at most this long: it runs after the response, in waitUntil. */
const REPORT_TIMEOUT_MS = 5000;

/** Per model: until when this isolate decides alone. */
const routerDownUntil = new Map<string, number>();
/** Fleet versions this isolate has seen a RouterDO accept; others are sent with their spec. */
const confirmed = new Set<string>();

class RouterUnavailable extends Error {
  override readonly name = "RouterUnavailable";
}

function deadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RouterUnavailable(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

export interface RouteCall {
  readonly stub: RouterStub;
  readonly pool: Pool;
  readonly req: RouteRequest;
  /** The request's A/B arm key (inference/arm-key.ts). */
  readonly armKey: number;
  readonly routerMs: number;
  readonly now: () => number;
  /** Keeps a background promise (a late lease's release, a report) alive past the response. */
  readonly waitUntil: (p: Promise<unknown>) => void;
}

/** Outcome of a retry's route call when the pool's retry budget is spent. */
export const RETRY_REFUSED = "retry_refused" as const;

/**
 * Chooses a backend: the RouterDO's decision when it answers in time, this
 * isolate's otherwise. For a retry, the failed decision is ended (its lease
 * released, its failure reported) and a budget is spent; RETRY_REFUSED when
 * there is none.
 */
export async function decide(call: RouteCall, retryOf?: RetryOf): Promise<Decision | typeof RETRY_REFUSED> {
  const { pool } = call;
  const local = localRouterFor(pool.model, pool.version, pool.spec);
  if (retryOf?.decision.via === "local") return decideLocally(call, local, retryOf);
  if ((routerDownUntil.get(pool.model) ?? 0) > call.now()) {
    if (retryOf !== undefined) endLeaseOf(call, retryOf);
    return decideLocally(call, local, retryOf);
  }
  try {
    const res = await routeVia(call, retryOf);
    if (!res.ok) {
      if (res.code === "retry_budget_exhausted") return RETRY_REFUSED;
      throw new GatewayError(503, "service_unavailable", "no_backends", res.message);
    }
    routerDownUntil.delete(pool.model);
    local.syncEjected(res.ejected);
    return {
      via: "router",
      leaseId: res.leaseId,
      backendId: res.backendId,
      reason: res.reason,
      expectedCachedTokens: res.expectedCachedTokens,
      availableCachedTokens: res.availableCachedTokens,
      inflightAtDecision: res.inflightAtDecision,
      policy: res.policy,
      arm: res.arm,
      ...(res.shadow !== undefined ? { shadow: res.shadow } : {}),
    };
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    routerDownUntil.set(pool.model, call.now() + ROUTER_BACKOFF_MS);
    // The RouterDO may or may not have ended the failed lease before it failed us: ending it again is a no-op.
    if (retryOf !== undefined) endLeaseOf(call, retryOf);
    return decideLocally(call, local, retryOf);
  }
}

function decideLocally(
  call: RouteCall,
  local: LocalRouter,
  retryOf?: RetryOf,
): Decision | typeof RETRY_REFUSED {
  const now = call.now();
  const ctx = { now, random: Math.random };
  let avoid: string | undefined;
  if (retryOf !== undefined) {
    avoid = retryOf.decision.backendId;
    if (retryOf.decision.via === "local")
      retryOf.decision.local.finish(retryOf.decision.ticket, failedReport(retryOf), ctx);
    if (!local.budget.tryWithdraw()) return RETRY_REFUSED;
  } else {
    local.budget.deposit();
  }
  const { decision, ticket } = local.decide(call.req, ctx, avoid);
  return {
    via: "local",
    ticket,
    local,
    routedAt: now,
    backendId: decision.backendId,
    reason: "local",
    expectedCachedTokens: decision.expectedCachedTokens,
    availableCachedTokens: decision.availableCachedTokens,
    inflightAtDecision: decision.inflightAtDecision,
    policy: "consistent_hash",
  };
}

/** The report of a failed attempt that is being retried. */
function failedReport(retryOf: RetryOf): CompleteInput {
  return {
    ok: false,
    failure: retryOf.failure,
    ...(retryOf.retryAfterMs !== undefined ? { retryAfterMs: retryOf.retryAfterMs } : {}),
  };
}

function endLeaseOf(call: RouteCall, retryOf: RetryOf): void {
  if (retryOf.decision.via !== "router") return;
  call.waitUntil(reportComplete(call.stub, retryOf.decision.leaseId, failedReport(retryOf)));
}

/** One route call (two when the RouterDO asks for the spec), within the deadline. */
async function routeVia(call: RouteCall, retryOf?: RetryOf): Promise<RouteResult> {
  const { pool, stub } = call;
  const key = `${pool.model}\u0000${pool.version}`;
  const retry =
    retryOf?.decision.via === "router"
      ? {
          retryOf: {
            leaseId: retryOf.decision.leaseId,
            failure: retryOf.failure,
            ...(retryOf.retryAfterMs !== undefined ? { retryAfterMs: retryOf.retryAfterMs } : {}),
          },
        }
      : {};
  const started = call.now();
  for (let withSpec = !confirmed.has(key); ; withSpec = true) {
    const input: RouteInput = {
      ...call.req,
      ...(call.armKey !== 0 ? { armKey: call.armKey } : {}),
      ...retry,
      fleetVersion: pool.version,
      ...(withSpec ? { spec: pool.spec } : {}),
    };
    // An async wrapper turns the RPC stub's promise-and-pipeline type into a plain promise.
    const pending = (async (): Promise<RouteResult> => stub.route(input))();
    let res: RouteResult;
    try {
      res = await deadline(pending, Math.max(1, call.routerMs - (call.now() - started)));
    } catch (err) {
      // Too late for this request; if the RouterDO still grants the lease, hand it back unused.
      call.waitUntil(
        pending.then(
          (late) =>
            late.ok ? reportComplete(stub, late.leaseId, { ok: false, failure: "unused" }) : undefined,
          () => undefined,
        ),
      );
      throw err;
    }
    if (res.ok) confirmed.add(key);
    if (res.ok || res.code !== "fleet_stale" || withSpec) return res;
  }
}

/** Ends a lease; a failure is swallowed (the lease's TTL releases its slot instead). */
export async function reportComplete(
  stub: RouterStub,
  leaseId: string,
  outcome: CompleteInput,
): Promise<void> {
  try {
    await deadline((async () => stub.complete(leaseId, outcome))(), REPORT_TIMEOUT_MS);
  } catch {
    // The RouterDO was unreachable: the lease's TTL releases its in-flight slot instead.
  }
}

/** Reports how a decision ended: its lease, or (a local decision) its own router and then observe(). */
export function reportOutcome(call: RouteCall, decision: Decision, outcome: CompleteInput): void {
  if (decision.via === "router") {
    call.waitUntil(reportComplete(call.stub, decision.leaseId, outcome));
    return;
  }
  decision.local.finish(decision.ticket, outcome, { now: call.now(), random: Math.random });
  const input: ObserveInput = {
    fleetVersion: call.pool.version,
    backendId: decision.backendId,
    blocks: call.req.blocks,
    promptTokens: call.req.promptTokens,
    routedAt: decision.routedAt,
    outcome,
  };
  call.waitUntil(
    deadline((async () => call.stub.observe(input))(), REPORT_TIMEOUT_MS).catch(() => {
      // Still unreachable: this outcome is lost to the RouterDO (the local router learned it).
    }),
  );
}
