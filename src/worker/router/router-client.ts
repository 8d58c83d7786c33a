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
 *
 * A lease's end costs no call of its own where traffic follows: the report
 * waits (REPORT_CARRY_MS) for this isolate's next route call to the same
 * RouterDO, which carries it and has the object end it before deciding; if
 * none comes in time, the waiting reports go in one completeAll call.
 *
 * The RouterDO keeps its leases in memory: this isolate remembers the ones
 * whose streams it holds (held-leases.ts), re-announces them when a route
 * answer comes from a new instance of the object (evicted, redeployed), and
 * sends what it holds of a lease with its end, so that end still counts.
 *
 * With MAX_INFLIGHT_PER_BACKEND (or a backend's maxInflight) set, a RouterDO whose every usable backend is at
 * its bound answers at_capacity: the request is shed with a 429 and the RouterDO's retry-after, at once, with no
 * lease and no retry. Deciding alone, an isolate sheds only when its own local decisions fill every backend.
 * With cells, a first attempt whose cell answers at_capacity is asked of at most SHED_EXTRA_CELLS other cells
 * (the chooser's fallback order, passing over cells this isolate heard full within the last SHED_CELL_FULL_MS
 * and cells whose breaker is open) and shed only when every asked cell is full, with the smallest retry-after.
 *
 * A pool may be split into K cells (pool-cells.ts), each a RouterDO over its
 * own backends. The request's cell is chosen here, by the pool's cell
 * chooser in this isolate (src/routing/cell-chooser.ts), which learns each
 * cell's load from the route responses: every call carries this isolate's
 * figures of every cell, and every response the cell's (cellLoads), so each
 * cell relays what all isolates told it (src/routing/cell-loads.ts), and with it the
 * conversations any isolate newly placed there (src/routing/cell-families.ts); from then on the
 * request lives in that cell: its lease, its retry (unless the cell has no backend to take it unsuspected:
 * movedRetry), its report, and, when the cell does not answer, the local decision among the cell's backends.
 */

import { learnsFirstTokens, type RouteTicket } from "../../routing";
import { CellChooser } from "../../routing/cell-chooser";
import { CellRing } from "../../routing/cell-ring";
import { CARRIED_COMPLETES_MAX, type LocationHint } from "../../routing/defaults";
import type { PolicyName, RoutedCount, RouteRequest } from "../../routing/types";
import type { GatewayConfig } from "../config";
import { deadline } from "../deadline";
import { fleetAtCapacity, GatewayError, keyOverShare } from "../errors";
import { PROBE_TIMEOUT_MS, probeBackend } from "../health-probe";
import { placementOptions } from "../location-hint";
import { CompleteOutbox } from "./complete-carry";
import { HeldLeases, heldOf, type OpenLease } from "./held-leases";
import { type LocalRouter, localRouterFor } from "./local-router";
import { isJudgedByRetry } from "./outcomes";
import { type Cell, poolCells, specVersion } from "./pool-cells";
import { RelayNotices } from "./relay-notices";

import type {
  BackendProgress,
  CarriedComplete,
  CompleteInput,
  FailureKind,
  HeldLease,
  ObserveInput,
  PoolSpec,
  ReopenedLease,
  RouteInput,
  RouteResult,
} from "./router-rpc";

export interface Pool {
  readonly model: string;
  readonly spec: PoolSpec;
  readonly version: string;
  /** The pool's RouterDO cells (one unless ROUTER_CELLS or the fleet's size says otherwise). */
  readonly cells: readonly Cell[];
  /** This isolate's choice of cell for the pool's requests (unused with one cell). */
  readonly chooser: CellChooser;
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
        .map((b) => ({
          id: b.id,
          url: b.url,
          weight: b.weight,
          kvCacheTokens: b.kvCacheTokens,
          ...(b.maxInflight !== undefined ? { maxInflight: b.maxInflight } : {}),
        })),
      ...config.router,
      model,
    };
    pool = specVersion(spec).then(async (version) => {
      const cells = await poolCells(model, spec, version, config.routerCells);
      const ring = new CellRing(cells.map((c) => c.spec.backends.reduce((w, b) => w + b.weight, 0)));
      const chooser = new CellChooser(ring, {
        balanceFactor: spec.balanceFactor,
        blockTokens: spec.blockTokens,
      });
      return { model, spec, version, cells, chooser };
    });
    pools.set(model, pool);
  }
  return pool;
}

/**
 * The RouterDO of one cell of a pool (the pool's only one, named by its model, when K = 1).
 * `hint` (ROUTER_LOCATION_HINT) places the object when this call creates it (location-hint.ts).
 */
export function routerStub(ns: Env["ROUTER"], cell: Cell, hint: LocationHint | undefined) {
  return ns.getByName(cell.name, placementOptions(hint));
}

export type RouterStub = ReturnType<typeof routerStub>;

/** What a RouterDO's decision carries from its route answer to the request's end. */
type RouterDecisionFields = Pick<
  Extract<RouteResult, { ok: true }>,
  | "leaseId"
  | "backendId"
  | "reason"
  | "expectedCachedTokens"
  | "availableCachedTokens"
  | "inflightAtDecision"
  | "routed"
  | "policy"
  | "arm"
  | "shadow"
>;

/** How the Worker reached a decision, and what it must report at the end. */
export type Decision =
  | (RouterDecisionFields & {
      readonly via: "router";
      /** The cell whose RouterDO holds the lease. */
      readonly cell: Cell;
      /** The lease as this isolate holds it (held-leases.ts); absent when the object did not say its instance. */
      readonly held?: OpenLease;
    })
  | {
      readonly via: "local";
      /** The cell that did not answer: the decision was made among its backends, and is reported to it. */
      readonly cell: Cell;
      readonly ticket: RouteTicket;
      readonly local: LocalRouter;
      readonly routedAt: number;
      readonly backendId: string;
      readonly reason: "local";
      readonly expectedCachedTokens: number;
      readonly availableCachedTokens: number;
      readonly inflightAtDecision: number;
      readonly routed?: RoutedCount;
      readonly policy: PolicyName;
    };

/** A retry of a failed decision. */
export interface RetryOf {
  readonly decision: Decision;
  readonly failure: FailureKind;
  readonly retryAfterMs?: number;
  /** Backends earlier attempts of the request failed on, avoided too (RouteInput.retryOf.tried). */
  readonly tried?: readonly string[];
}

/** After a failed route call, this isolate decides alone for this long before asking again. */
export const ROUTER_BACKOFF_MS = 1000;
/** A report (complete, observe) waits at most this long: it runs after the response, in waitUntil. */
const REPORT_TIMEOUT_MS = 5000;

/** Lease ends waiting for a route call to their cell to carry them (complete-carry.ts). */
const outbox = new CompleteOutbox();
/** The leases this isolate holds open, re-announced to a RouterDO instance that never saw them. */
const heldLeases = new HeldLeases();
/** Backends this isolate is relaying answers from, waiting to be told to their cell (relay-notices.ts). */
const notices = new RelayNotices();

/** Per cell (RouterDO name): until when this isolate decides alone. */
const routerDownUntil = new Map<string, number>();
/**
 * Other cells a first attempt is asked of when its cell is full, at most. Each is one more route call on the
 * request's path (a few ms in the colo) and one more Durable Object request, paid exactly when the pool is
 * overloaded: 2 keeps a full pool's cost at three calls per shed request however many cells it has (auto cuts
 * one per 16 backends), and with cells heard full passed over (SHED_CELL_FULL_MS), a pool that stays full costs
 * about one. A request that finds its cell and two others full is shed though a fourth may have a slot: a
 * pool that full sheds soon anyway.
 */
export const SHED_EXTRA_CELLS = 2;
/**
 * A cell that answered at_capacity is not asked for another cell's request for this long (or its retry-after,
 * if shorter): its slots free about once per mean gap between its requests' ends, and its own requests still
 * ask it first, so it is heard again soon.
 */
export const SHED_CELL_FULL_MS = ROUTER_BACKOFF_MS;
/** Per cell (RouterDO name): until when this isolate passes it over as another cell's fallback (heard full). */
const cellFullUntil = new Map<string, number>();

/** Fleet versions this isolate has seen a RouterDO accept; others are sent with their spec. */
const confirmed = new Set<string>();

class RouterUnavailable extends Error {
  override readonly name = "RouterUnavailable";
}

/** `p`, or RouterUnavailable after `ms`. */
function withinRouterDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  return deadline(p, ms, () => {
    throw new RouterUnavailable(`no answer within ${ms} ms`);
  });
}

export interface RouteCall {
  /** The RouterDO namespace: each cell's object is named in it (routerStub). */
  readonly router: Env["ROUTER"];
  /** ROUTER_LOCATION_HINT: where a cell's RouterDO is created, if this call creates it. */
  readonly locationHint: LocationHint | undefined;
  readonly pool: Pool;
  readonly req: RouteRequest;
  /** The request's A/B arm key (inference/arm-key.ts). */
  readonly armKey: number;
  /** The client's gateway key id (RouteInput.clientKey): its share of the pool's retry budget. */
  readonly clientKey?: string;
  readonly routerMs: number;
  /** REPORT_CARRY_MS: how long a finished request's report waits for a route call to carry it. */
  readonly reportCarryMs: number;
  /**
   * At most one relay notice per backend per this long, from this isolate (noticeRelay), and how long one
   * waits for a route call to carry it: a quarter of UPSTREAM_FIRST_BYTE_TIMEOUT_MS (relayNoticeMs). 0: none.
   */
  readonly relayNoticeMs: number;
  readonly now: () => number;
  /** Told when the request is shed (every usable backend at its bound), by whom, before the 429 is thrown. */
  readonly onShed?: (by: "router" | "local" | "key_share") => void;
  /** Keeps a background promise (a late lease's release, a report) alive past the response. */
  readonly waitUntil: (p: Promise<unknown>) => void;
  /**
   * A backend's BACKENDS apiKey (undefined: none), for the local probes of backends this isolate ejected while
   * the RouterDO is out of reach (probeOwnEjections): with it, a probe also checks the key requests carry, as
   * the RouterDO's does. Absent: /health alone decides.
   */
  readonly backendApiKey?: (backendId: string) => string | undefined;
}

/** Outcome of a retry's route call when the pool's retry budget is spent. */
export const RETRY_REFUSED = "retry_refused" as const;
/** A busy retry with no backend left to move on to but those its attempts met (RouteResult nowhere_else). */
export const NOWHERE_ELSE = "nowhere_else" as const;

/**
 * Chooses a backend: the RouterDO's decision when it answers in time, this
 * isolate's otherwise. For a retry, the failed decision is ended (its lease
 * released, its failure reported) and a budget is spent; RETRY_REFUSED when
 * there is none.
 */
export async function decide(
  call: RouteCall,
  retryOf?: RetryOf,
): Promise<Decision | typeof RETRY_REFUSED | typeof NOWHERE_ELSE> {
  // A retry is asked of its first attempt's cell: that RouterDO holds the failed lease and the failed backend
  // (and may send it on to another cell: movedRetry).
  const { cell, placed } =
    retryOf !== undefined ? { cell: retryOf.decision.cell, placed: undefined } : chooseCell(call);
  const local = localRouterFor(cell.name, cell.version, cell.spec);
  // The failed attempt's lease ends with this retry (carried on its route call, or sent alone).
  if (retryOf?.decision.via === "router") heldLeases.close(cell.name, retryOf.decision.leaseId);
  if (retryOf?.decision.via === "local") return decideLocally(call, cell, local, retryOf);
  if ((routerDownUntil.get(cell.name) ?? 0) > call.now()) {
    if (retryOf !== undefined) endLeaseOf(call, retryOf);
    return decideLocally(call, cell, local, retryOf);
  }
  // Where a first attempt may go if its cell is full or has nothing usable, and a retry if its cell has no
  // backend but the failed one it can take unsuspected (none with one cell). A 500's or 404's retry stays: its
  // outcome is the failed backend's verdict, which that cell's RouterDO waits for.
  const extras = retryOf === undefined || !isJudgedByRetry(retryOf.failure) ? fallbackCells(call, cell) : [];
  try {
    const res = await routeVia(call, cell, retryOf, placed, extras.length > 0);
    if (!res.ok) {
      if (res.code === "retry_budget_exhausted") return RETRY_REFUSED;
      if (res.code === "nowhere_else") return NOWHERE_ELSE;
      if (res.code === "no_usable" && retryOf !== undefined)
        return await movedRetry(call, cell, retryOf, extras);
      if (res.code === "no_usable") return await aroundUnusable(call, cell, placed, extras);
      if (res.code === "at_capacity") {
        routerDownUntil.delete(cell.name);
        if (extras.length > 0 && res.overShare === undefined) heardFull(call, cell, res.retryAfterMs);
        const moved = await askElsewhere(call, extras, res.retryAfterMs);
        if ("decision" in moved) return moved.decision;
        shedByRouter(call, moved.retryAfterMs, res.overShare);
      }
      throw new GatewayError(503, "service_unavailable", "no_backends", res.message);
    }
    return admitted(call, cell, local, res);
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    routerDownUntil.set(cell.name, call.now() + ROUTER_BACKOFF_MS);
    // The RouterDO may or may not have ended the failed lease before it failed us: ending it again is a no-op.
    if (retryOf !== undefined) endLeaseOf(call, retryOf);
    return decideLocally(call, cell, local, retryOf);
  }
}

/**
 * The cells a first attempt may be moved to when `cell` answers at_capacity or no_usable: none with one cell;
 * else the chooser's fallback order, without cells whose breaker is open, that this isolate heard full within
 * SHED_CELL_FULL_MS or that the chooser passes over (no usable backend), at most SHED_EXTRA_CELLS. A moved
 * request loses its own cell's affinity index (and its family's place there): the right trade only when that
 * cell has no slot for it, or nothing to serve it with. With the bound off no cell answers at_capacity, and a
 * pool's cells are asked with RouteInput.movable so that one with nothing usable says so.
 */
function fallbackCells(call: RouteCall, cell: Cell): Cell[] {
  const { cells, chooser } = call.pool;
  if (cells.length === 1) return [];
  const now = call.now();
  const out: Cell[] = [];
  for (const i of chooser.fallbackOrder(call.req, cell.index)) {
    const other = cells[i]!;
    if ((routerDownUntil.get(other.name) ?? 0) > now || (cellFullUntil.get(other.name) ?? 0) > now) continue;
    if (chooser.unusable(i, now)) continue;
    out.push(other);
    if (out.length === SHED_EXTRA_CELLS) break;
  }
  return out;
}

/**
 * `cell` answered no_usable (every backend drained, ejected or failing): the chooser passes it over for CELL_UNUSABLE_MS,
 * and the request is asked of `extras` in turn. When none admits it (each full, down or with nothing usable
 * too), it is shed if a cell said full, else routed in its own cell as with one RouterDO (which routes onto
 * its failing backends rather than answer nothing: an answer from one may still come).
 */
async function aroundUnusable(
  call: RouteCall,
  cell: Cell,
  placed: number | undefined,
  extras: readonly Cell[],
): Promise<Decision> {
  call.pool.chooser.markUnusable(cell.index, call.now());
  const moved = await askElsewhere(call, extras, Number.POSITIVE_INFINITY);
  if ("decision" in moved) return moved.decision;
  if (Number.isFinite(moved.retryAfterMs)) shedByRouter(call, moved.retryAfterMs);
  const res = await routeVia(call, cell, undefined, placed, false);
  if (res.ok) return admitted(call, cell, localRouterFor(cell.name, cell.version, cell.spec), res);
  if (res.code === "at_capacity") shedByRouter(call, res.retryAfterMs, res.overShare);
  throw new GatewayError(503, "service_unavailable", "no_backends", res.message);
}

/**
 * `cell` ended the failed lease, spent the retry budget, and had no backend but the failed one to take the retry
 * unsuspected: the retry is asked of `extras` in turn (RouteInput.movedRetry: no budget deposited again), within
 * the one retry the request has. When none admits it (each full, down or with nothing usable), it goes back to
 * its own cell, avoiding every backend the request's attempts failed on, as it would have with one cell; when that too fails, the client gets
 * the first attempt's failure (RETRY_REFUSED: the lease is already ended).
 */
async function movedRetry(
  call: RouteCall,
  cell: Cell,
  retryOf: RetryOf,
  extras: readonly Cell[],
): Promise<Decision | typeof RETRY_REFUSED> {
  const moved = await askElsewhere(call, extras, Number.POSITIVE_INFINITY, {});
  if ("decision" in moved) return moved.decision;
  try {
    const res = await routeVia(call, cell, undefined, undefined, false, {
      avoid: retryOf.decision.backendId,
      ...triedOf(retryOf),
    });
    if (res.ok) return admitted(call, cell, localRouterFor(cell.name, cell.version, cell.spec), res);
  } catch {
    routerDownUntil.set(cell.name, call.now() + ROUTER_BACKOFF_MS);
  }
  return RETRY_REFUSED;
}

/**
 * Refuses the request: no cell the RouterDOs were asked of had room (counted as shed by the router), or its own
 * cell had room but not for this key (`overShare`: the key holds its fair share while other keys wait).
 */
function shedByRouter(
  call: RouteCall,
  retryAfterMs: number,
  overShare?: { readonly held: number; readonly share: number },
): never {
  call.onShed?.(overShare === undefined ? "router" : "key_share");
  if (overShare !== undefined) throw keyOverShare(call.pool.model, overShare.held, retryAfterMs);
  throw fleetAtCapacity(call.pool.model, retryAfterMs);
}

function heardFull(call: RouteCall, cell: Cell, retryAfterMs: number): void {
  const ms = Number.isFinite(retryAfterMs) ? Math.min(SHED_CELL_FULL_MS, retryAfterMs) : SHED_CELL_FULL_MS;
  cellFullUntil.set(cell.name, call.now() + ms);
}

/**
 * Asks `cells` in turn for a first attempt its own cell had no room for: the first that admits it serves it
 * (its lease, its retry, its report from then on); one that is full or does not answer is passed over (a
 * failed call opens that cell's breaker, as any route call's does; nothing is decided locally in a cell the
 * request was never placed in). Every cell but the last is told the request may move (RouteInput.movable), so
 * a cell counts it shed only when it is the last asked. Else: the smallest retry-after any cell gave.
 */
async function askElsewhere(
  call: RouteCall,
  cells: readonly Cell[],
  retryAfterMs: number,
  movedRetry?: RouteInput["movedRetry"],
): Promise<{ decision: Decision } | { retryAfterMs: number }> {
  let soonest = retryAfterMs;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i]!;
    let res: RouteResult;
    try {
      // A moved retry has its own cell to fall back on: every cell asked for it may say it cannot take it.
      const movable = movedRetry !== undefined || i < cells.length - 1;
      res = await routeVia(call, cell, undefined, undefined, movable, movedRetry);
    } catch {
      routerDownUntil.set(cell.name, call.now() + ROUTER_BACKOFF_MS);
      continue;
    }
    routerDownUntil.delete(cell.name);
    if (res.ok) {
      const local = localRouterFor(cell.name, cell.version, cell.spec);
      return { decision: admitted(call, cell, local, res) };
    }
    if (res.code === "at_capacity") {
      if (res.overShare === undefined) heardFull(call, cell, res.retryAfterMs);
      if (Number.isFinite(res.retryAfterMs)) soonest = Math.min(soonest, res.retryAfterMs);
    }
    if (res.code === "no_usable") call.pool.chooser.markUnusable(cell.index, call.now());
  }
  return { retryAfterMs: soonest };
}

/** A RouterDO's grant: what its answer teaches this isolate, the lease held, the decision. */
function admitted(
  call: RouteCall,
  cell: Cell,
  local: LocalRouter,
  res: Extract<RouteResult, { ok: true }>,
): Decision {
  routerDownUntil.delete(cell.name);
  // A grant says whether the cell has a backend in rotation: its `ejected` list names them all when it failed
  // open (a retry, the last cell asked, an object deployed before no_usable), and the chooser passes it over.
  if (call.pool.cells.length > 1) {
    if (inRotation(cell, res.ejected)) call.pool.chooser.markUsable(cell.index);
    else call.pool.chooser.markUnusable(cell.index, call.now());
  }
  if (res.cellInflight !== undefined) call.pool.chooser.report(cell.index, res.cellInflight, call.now());
  if (res.cellLoads !== undefined) call.pool.chooser.loads.merge(res.cellLoads, call.now());
  if (res.cellFamilies !== undefined) call.pool.chooser.learnFamilies(res.cellFamilies);
  local.syncEjected(res.ejected, res.probation);
  const held = holdLease(call, cell, res);
  return {
    via: "router",
    cell,
    leaseId: res.leaseId,
    backendId: res.backendId,
    reason: res.reason,
    expectedCachedTokens: res.expectedCachedTokens,
    availableCachedTokens: res.availableCachedTokens,
    inflightAtDecision: res.inflightAtDecision,
    ...(res.routed !== undefined ? { routed: res.routed } : {}),
    policy: res.policy,
    arm: res.arm,
    ...(res.shadow !== undefined ? { shadow: res.shadow } : {}),
    ...(held !== undefined ? { held } : {}),
  };
}

/** Whether any of `cell`'s backends is out of `ejected` (a route answer's list of those ejected or drained). */
function inRotation(cell: Cell, ejected: readonly string[] | undefined): boolean {
  if (ejected === undefined) return true;
  const out = new Set(ejected);
  return cell.spec.backends.some((b) => !out.has(b.id));
}

/**
 * Remembers the lease this isolate was granted, and, when the answer came from another instance of
 * the cell's RouterDO than the last one (an eviction, a deploy), re-announces the leases this isolate
 * holds of earlier instances, so the new one counts their streams in flight (held-leases.ts).
 */
function holdLease(
  call: RouteCall,
  cell: Cell,
  res: Extract<RouteResult, { ok: true }>,
): OpenLease | undefined {
  if (res.instance === undefined) return undefined;
  const now = call.now();
  const stale = heldLeases.answered(cell.name, res.instance, now);
  if (stale.length > 0) call.waitUntil(reopenAll(routerStub(call.router, cell, call.locationHint), stale));
  const lease: OpenLease = {
    leaseId: res.leaseId,
    backendId: res.backendId,
    instance: res.instance,
    arm: res.arm,
    ...(call.clientKey !== undefined ? { key: call.clientKey } : {}),
    grantedAt: now,
    expiresAt: now + cell.spec.leaseTtlSeconds * 1000,
  };
  heldLeases.open(cell.name, lease, now);
  return lease;
}

/**
 * Re-announces held leases in batches; an unreachable RouterDO leaves those streams uncounted until
 * they end, and their ends are still applied.
 */
function reopenAll(stub: RouterStub, items: readonly ReopenedLease[]): Promise<void> {
  return inBatches(items, (batch) => stub.reopen(batch));
}

/**
 * Sends `items` to a RouterDO, CARRIED_COMPLETES_MAX per call (bounded RPC arguments), one call at
 * a time, each within REPORT_TIMEOUT_MS; a call that fails or times out is dropped (both uses
 * have a fallback: see the callers) and the next batch is still sent.
 */
async function inBatches<T>(
  items: readonly T[],
  send: (batch: readonly T[]) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < items.length; i += CARRIED_COMPLETES_MAX) {
    const batch = items.slice(i, i + CARRIED_COMPLETES_MAX);
    try {
      await withinRouterDeadline((async () => send(batch))(), REPORT_TIMEOUT_MS);
    } catch {
      // Unreachable: the caller's fallback covers this batch.
    }
  }
}

/** What a decision's end tells a RouterDO instance that does not know its lease. */
function heldFor(call: RouteCall, decision: Decision): { held?: HeldLease } {
  return decision.via === "router" && decision.held !== undefined
    ? { held: heldOf(decision.held, call.now()) }
    : {};
}

/** The request's cell: the pool's only one, or the cell chooser's pick (and the family it newly placed, to relay). */
function chooseCell(call: RouteCall): { cell: Cell; placed: number | undefined } {
  const { cells, chooser } = call.pool;
  if (cells.length === 1) return { cell: cells[0]!, placed: undefined };
  const choice = chooser.choose(call.req, call.now());
  return { cell: cells[choice.cell]!, placed: choice.placed };
}

function decideLocally(
  call: RouteCall,
  cell: Cell,
  local: LocalRouter,
  retryOf?: RetryOf,
): Decision | typeof RETRY_REFUSED | typeof NOWHERE_ELSE {
  const now = call.now();
  const ctx = { now, random: Math.random };
  probeOwnEjections(call, cell, local, now);
  let avoid: readonly string[] | undefined;
  if (retryOf !== undefined) {
    avoid = [retryOf.decision.backendId, ...(retryOf.tried ?? [])];
    if (retryOf.decision.via === "local")
      retryOf.decision.local.finish(retryOf.decision.ticket, failedReport(retryOf), ctx);
    // A busy retry moving on with no backend left but those its attempts met: the RouterDO's rule (nowhere_else,
    // before the budget), or the decision below falls back on a tried one (the dead first backend: its 502).
    if (retryOf.tried !== undefined && retryOf.tried.length > 0 && !local.usableBesides(avoid))
      return NOWHERE_ELSE;
    if (!local.budget.tryWithdraw(call.clientKey)) return RETRY_REFUSED;
  }
  // The bound, as far as this isolate can tell alone (local-router.ts fullBackends): a first attempt with no
  // room is shed; the RouterDO is asked again after ROUTER_BACKOFF_MS, when the client is told to come back.
  const full = local.fullBackends();
  if (full !== undefined && retryOf === undefined) {
    local.asked(call.clientKey, now);
    if (!local.hasRoom(full, now)) {
      call.onShed?.("local");
      throw fleetAtCapacity(call.pool.model, ROUTER_BACKOFF_MS);
    }
    // Fair shedding between keys, the RouterDO's rule on this isolate's counts (LocalRouter.overShare).
    const over = local.overShare(call.clientKey, now);
    if (over !== undefined) {
      call.onShed?.("key_share");
      throw keyOverShare(call.pool.model, over.held, ROUTER_BACKOFF_MS);
    }
  }
  if (retryOf === undefined) local.budget.deposit(call.clientKey);
  const { decision, ticket } = local.decide(call.req, ctx, avoid, full, call.clientKey);
  return {
    via: "local",
    cell,
    ticket,
    local,
    routedAt: now,
    backendId: decision.backendId,
    reason: "local",
    expectedCachedTokens: decision.expectedCachedTokens,
    availableCachedTokens: decision.availableCachedTokens,
    inflightAtDecision: decision.inflightAtDecision,
    ...(decision.routed !== undefined ? { routed: decision.routed } : {}),
    policy: "consistent_hash",
  };
}

/**
 * Probes, off the request's path (waitUntil), the backends this isolate ejected on its own outcomes whose probe
 * is due (LocalRouter.takeDueProbes), with the RouterDO's probe (health-probe.ts) and its rule: through a long
 * RouterDO outage such a backend otherwise stayed out for good (and with several, the pool shrank) though it had
 * recovered. Driven by the local decisions themselves: no request while the RouterDO is down, no probe needed.
 * Bounded: one probe per due backend at a time, each within PROBE_TIMEOUT_MS. Never throws.
 */
function probeOwnEjections(call: RouteCall, cell: Cell, local: LocalRouter, now: number): void {
  for (const id of local.takeDueProbes(now)) {
    const backend = cell.spec.backends.find((b) => b.id === id);
    if (backend === undefined) continue;
    const apiKey = call.backendApiKey?.(id);
    call.waitUntil(
      probeBackend(backend.url, {
        timeoutMs: PROBE_TIMEOUT_MS,
        ...(apiKey !== undefined ? { apiKey } : {}),
        ...(call.backendApiKey !== undefined ? { checkCredentials: true } : {}),
      }).then(
        (r) => local.probed(id, r.healthy, call.now()),
        () => local.probed(id, false, call.now()),
      ),
    );
  }
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
  const stub = routerStub(call.router, retryOf.decision.cell, call.locationHint);
  const { held } = heldFor(call, retryOf.decision);
  call.waitUntil(reportComplete(stub, retryOf.decision.leaseId, failedReport(retryOf), held));
}

/** One route call (two when the RouterDO asks for the spec), within the deadline. */
async function routeVia(
  call: RouteCall,
  cell: Cell,
  retryOf: RetryOf | undefined,
  placed: number | undefined,
  movable = false,
  movedRetry?: RouteInput["movedRetry"],
): Promise<RouteResult> {
  const stub = routerStub(call.router, cell, call.locationHint);
  const key = `${cell.name}\u0000${cell.version}`;
  const retry =
    retryOf?.decision.via === "router"
      ? {
          retryOf: {
            leaseId: retryOf.decision.leaseId,
            failure: retryOf.failure,
            ...(retryOf.retryAfterMs !== undefined ? { retryAfterMs: retryOf.retryAfterMs } : {}),
            ...triedOf(retryOf),
            ...heldFor(call, retryOf.decision),
          },
        }
      : {};
  const started = call.now();
  // This isolate's finished requests in this cell ride along (on the first call only: it ends them).
  let carried = outbox.take(cell.name, CARRIED_COMPLETES_MAX);
  // And its relay notices (on both calls: a fresh object hears them only with the spec; hearing twice is a no-op).
  const relaying = notices.take(cell.name, call.now());
  for (let withSpec = !confirmed.has(key); ; withSpec = true) {
    const input: RouteInput = {
      ...call.req,
      ...(carried.length > 0 ? { completes: carried } : {}),
      ...(relaying.length > 0 ? { relaying } : {}),
      ...(call.armKey !== 0 ? { armKey: call.armKey } : {}),
      ...(call.clientKey !== undefined ? { clientKey: call.clientKey } : {}),
      ...retry,
      ...(movable ? { movable: true as const } : {}),
      ...(movedRetry !== undefined ? { movedRetry } : {}),
      fleetVersion: cell.version,
      ...(withSpec ? { spec: cell.spec } : {}),
      ...(call.pool.cells.length > 1
        ? {
            cellLoads: {
              cell: cell.index,
              figures: call.pool.chooser.loads.toWire(call.now()),
              ...(placed !== undefined ? { placed } : {}),
            },
          }
        : {}),
    };
    // An async wrapper turns the RPC stub's promise-and-pipeline type into a plain promise.
    const pending = (async (): Promise<RouteResult> => stub.route(input))();
    let res: RouteResult;
    try {
      res = await withinRouterDeadline(pending, Math.max(1, call.routerMs - (call.now() - started)));
    } catch (err) {
      // The object may not have ended what this call carried: send it again (ending twice is a no-op).
      if (carried.length > 0) call.waitUntil(reportAll(stub, carried));
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
    carried = [];
    if (res.ok) confirmed.add(key);
    if (res.ok || res.code !== "fleet_stale" || withSpec) return res;
  }
}

/**
 * How long ago each backend of `cell` last finished a request with an answer, as its RouterDO heard it from
 * every isolate (RouterDO.progress()); undefined when the object does not answer within ROUTER_TIMEOUT_MS,
 * throws, or this isolate is deciding alone for now (its route calls failed: ROUTER_BACKOFF_MS). Never
 * throws, and never opens that breaker: the caller falls back on what it saw itself (upstream.ts firstBytes).
 */
export async function askProgress(
  call: RouteCall,
  cell: Cell,
): Promise<readonly BackendProgress[] | undefined> {
  if ((routerDownUntil.get(cell.name) ?? 0) > call.now()) return undefined;
  try {
    const stub = routerStub(call.router, cell, call.locationHint);
    const res = await withinRouterDeadline((async () => stub.progress())(), call.routerMs);
    return res.ok && Array.isArray(res.backends) ? res.backends : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Answer bytes of `backendId` (in `cell`) were relayed at `at`, by a stream relaying since `since` (its first
 * bytes): the cell's RouterDO is told, so a request waiting on
 * that backend in another isolate knows it busy, not hung, even if none of its requests ends within the window
 * (RouterDO.progress()). Only a stream relaying for `relayNoticeMs` or more tells: a shorter answer ends, and
 * its lease end is the evidence (no notice, no flush held in waitUntil). Never on the request's path:
 * rate-limited per backend (relay-notices.ts), carried on the next route call to the cell when one comes
 * within `relayNoticeMs`, else sent alone in waitUntil, within REPORT_TIMEOUT_MS; skipped (and dropped)
 * while this isolate's route-call breaker is open. Never throws, and a failure never opens the breaker.
 */
export function noticeRelay(call: RouteCall, cell: Cell, backendId: string, at: number, since: number): void {
  if (call.relayNoticeMs <= 0 || at - since < call.relayNoticeMs) return;
  try {
    const batch = notices.relayed(cell.name, backendId, at, call.relayNoticeMs);
    if (batch !== undefined) call.waitUntil(flushNotices(call, cell, batch));
  } catch {
    // Evidence only: a request never fails for its notice.
  }
}

/** Sends what still waits of `cell`'s relay notices, `relayNoticeMs` after the first of them, if no route call took it. */
async function flushNotices(call: RouteCall, cell: Cell, batch: number): Promise<void> {
  await new Promise((r) => setTimeout(r, call.relayNoticeMs));
  const items = notices.takeBatch(cell.name, batch, call.now());
  if (items.length === 0 || (routerDownUntil.get(cell.name) ?? 0) > call.now()) return;
  try {
    const stub = routerStub(call.router, cell, call.locationHint);
    await withinRouterDeadline((async () => stub.relaying(items))(), REPORT_TIMEOUT_MS);
  } catch {
    // Evidence only: the waiting requests fall back on what their isolates saw (the old behaviour).
  }
}

/**
 * A streamed answer's first content was relayed (respond.ts): whoever decided the attempt is told, so the routing
 * policy learns how late first tokens come against its predicted prefill ends and keeps a backend's queue until
 * its unanswered prefills are really over (cost-model.ts unansweredQueueWaitMs). A RouterDO decision: one call to
 * the cell holding the lease (RouterDO.firstToken, timed on that object's clock), in waitUntil, within
 * REPORT_TIMEOUT_MS; never awaited on the client's path, never retried, skipped while this isolate's route-call
 * breaker for the cell is open; a failure is logged and never opens the breaker. Not carried on another route
 * call: none is due at that moment, and waiting for one would add the wait to the lateness learned. Skipped when
 * nothing in the RouterDO would learn from it (heardByRouter: an A/B arm or pool whose policy does not, the shadow
 * elsewhere). A local decision: this isolate's router, at once. Never throws.
 */
export function noticeFirstToken(call: RouteCall, decision: Decision): void {
  try {
    if (decision.via === "local") {
      decision.local.firstToken(decision.ticket, call.now());
      return;
    }
    if (!heardByRouter(decision)) return;
    const { cell, leaseId } = decision;
    if ((routerDownUntil.get(cell.name) ?? 0) > call.now()) return;
    const stub = routerStub(call.router, cell, call.locationHint);
    call.waitUntil(
      withinRouterDeadline((async () => stub.firstToken(leaseId))(), REPORT_TIMEOUT_MS).catch(
        (err: unknown) => firstTokenLost(cell, err),
      ),
    );
  } catch (err) {
    // Evidence only: a request never fails for its notice.
    firstTokenLost(decision.cell, err);
  }
}

/**
 * Whether the RouterDO learns anything from this decision's first token. PoolRouter.firstToken tells the arm that
 * placed the request, and the shadow only when it chose the same backend; each arm keeps its own ledger of
 * predicted prefill ends, fed by its own placements only (pool-router.ts), so a prefix_aware arm never hears of
 * the other arm's prefills. A request a round_robin arm placed is then worth the call only when the shadow
 * chose its backend too.
 */
export function heardByRouter(decision: Extract<Decision, { via: "router" }>): boolean {
  return learnsFirstTokens(decision.policy) || decision.shadow?.backendId === decision.backendId;
}

/** One line per lost first-token notice (the policy goes on with what it learned; the lease's end still comes). */
function firstTokenLost(cell: Cell, err: unknown): void {
  console.error(
    JSON.stringify({
      event: "first_token_notice_failed",
      cell: cell.name,
      error: err instanceof Error ? err.message : String(err),
    }),
  );
}

/** Ends a lease; a failure is swallowed (the lease's TTL releases its slot instead). */
export async function reportComplete(
  stub: RouterStub,
  leaseId: string,
  outcome: CompleteInput,
  held?: HeldLease,
): Promise<void> {
  try {
    await withinRouterDeadline((async () => stub.complete(leaseId, outcome, held))(), REPORT_TIMEOUT_MS);
  } catch {
    // The RouterDO was unreachable: the lease's TTL releases its in-flight slot instead.
  }
}

/** Ends leases in batches; an unreachable RouterDO lets their TTL release their in-flight slots instead. */
function reportAll(stub: RouterStub, items: readonly CarriedComplete[]): Promise<void> {
  return inBatches(items, (batch) => stub.completeAll(batch));
}

/**
 * Ends a lease by the next route call this isolate makes to its cell, or, when none comes within
 * REPORT_CARRY_MS, by a call of its own (with whatever else waits for that cell).
 */
async function carryOrSend(
  call: RouteCall,
  cell: Cell,
  leaseId: string,
  outcome: CompleteInput,
  held: HeldLease | undefined,
): Promise<void> {
  const stub = () => routerStub(call.router, cell, call.locationHint);
  if (call.reportCarryMs === 0) return reportComplete(stub(), leaseId, outcome, held);
  const entry = outbox.add(cell.name, { leaseId, outcome, ...(held !== undefined ? { held } : {}) });
  await new Promise((r) => setTimeout(r, call.reportCarryMs));
  if (entry.taken) return; // a route call carries it (and sends it again if that call fails)
  await reportAll(stub(), outbox.take(cell.name, Number.POSITIVE_INFINITY));
}

/** Reports how a decision ended: its lease, or (a local decision) its own router and then observe(). */
export function reportOutcome(call: RouteCall, decision: Decision, outcome: CompleteInput): void {
  if (decision.via === "router") {
    heldLeases.close(decision.cell.name, decision.leaseId);
    call.waitUntil(carryOrSend(call, decision.cell, decision.leaseId, outcome, heldFor(call, decision).held));
    return;
  }
  const stub = routerStub(call.router, decision.cell, call.locationHint);
  decision.local.finish(decision.ticket, outcome, { now: call.now(), random: Math.random });
  const input: ObserveInput = {
    fleetVersion: decision.cell.version,
    backendId: decision.backendId,
    blocks: call.req.blocks,
    promptTokens: call.req.promptTokens,
    ...(call.req.prompts !== undefined ? { prompts: call.req.prompts } : {}),
    ...(call.req.unconfirmedTokens !== undefined ? { unconfirmedTokens: call.req.unconfirmedTokens } : {}),
    routedAt: decision.routedAt,
    outcome,
  };
  call.waitUntil(
    withinRouterDeadline((async () => stub.observe(input))(), REPORT_TIMEOUT_MS).catch(() => {
      // Still unreachable: this outcome is lost to the RouterDO (the local router learned it).
    }),
  );
}

/** A retry's `tried` as the RouteInput carries it: absent when its earlier attempts met no other backend. */
function triedOf(retryOf: RetryOf): { tried?: readonly string[] } {
  return retryOf.tried !== undefined && retryOf.tried.length > 0 ? { tried: retryOf.tried } : {};
}
