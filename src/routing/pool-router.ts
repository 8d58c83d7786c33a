/**
 * The Routers of one model pool: the serving arm (or two, for an A/B
 * split) and an optional shadow. They share one HealthTracker (health has
 * one owner: every real outcome feeds it once, through the arm that routed
 * it) while each keeps its own affinity index, load view and cost model, so
 * an arm's decisions never learn from the other arm's traffic.
 *
 * A/B: a request's arm is a function of its arm key (a conversation's or a
 * tenant's hash, chosen by the caller), so a conversation never flips arms.
 * Each arm sees only its own requests in flight: its bounded-load cap and
 * prefill queue count its share of the fleet's work, not the other arm's.
 *
 * Shadow: after the serving arm decides, the shadow Router (prefix_aware)
 * decides too and commits the request to its own index as if it had served
 * it there; when the request ends, it learns the outcome — the engine's
 * cached tokens and TTFT only when it chose the backend that really served,
 * since those figures describe that backend. Its expected cached tokens are
 * what prefix_aware would have captured had it been routing all along. It
 * never feeds health (passive) and never changes which backend serves.
 * Cost: a second route + complete per request (~the core's decision time)
 * and a second affinity index (the same memory as the first).
 */

import type { HealthChange, HealthRow, HealthSettings, ProbationRow } from "./backend-health";
import { HealthTracker } from "./backend-health";
import { Router, type RouteTicket } from "./router";
import { DEFAULT_HEALTH_SETTINGS, type RouterOptions } from "./router-options";
import type { RouterStats } from "./router-stats";
import type { BackendSpec, RouteContext, RouteDecision, RouteOutcome, RouteRequest } from "./types";

export type ArmIndex = 0 | 1;

/** The split's resolution: arm keys map onto this many buckets. */
const ARM_BUCKETS = 10_000;

/** Arm 1 (B) when the key's bucket falls in the first `percentB` percent, else arm 0 (A). */
export function armOf(armKey: number, percentB: number): ArmIndex {
  const bucket = (armKey >>> 0) % ARM_BUCKETS;
  return bucket < Math.round(percentB * (ARM_BUCKETS / 100)) ? 1 : 0;
}

export interface PoolRouterOptions {
  /** Arm A's options, and arm B's when the pool runs a split. */
  readonly arms: readonly [RouterOptions] | readonly [RouterOptions, RouterOptions];
  /** Share of arm keys that go to arm B, percent (0..100); ignored with one arm. */
  readonly percentB?: number;
  /** The shadow's options (its policy: prefix_aware); absent: no shadow. */
  readonly shadow?: RouterOptions;
}

/** What the shadow would have done with a request. */
export interface ShadowDecision {
  readonly backendId: string;
  readonly expectedCachedTokens: number;
}

export interface PoolTicket {
  readonly arm: ArmIndex;
  readonly ticket: RouteTicket;
  readonly shadow?: RouteTicket;
}

export interface PoolDecision {
  readonly arm: ArmIndex;
  readonly decision: RouteDecision;
  readonly shadow?: ShadowDecision;
  readonly ticket: PoolTicket;
}

export class PoolRouter {
  readonly arms: readonly Router[];
  readonly shadow: Router | undefined;
  readonly percentB: number;
  private readonly health: HealthTracker;

  constructor(backends: readonly BackendSpec[], options: PoolRouterOptions) {
    const percentB = options.percentB ?? 0;
    if (!(percentB >= 0 && percentB <= 100))
      throw new RangeError(`percentB: must be 0..100, got ${percentB}`);
    this.percentB = options.arms.length > 1 ? percentB : 0;
    this.health = new HealthTracker(options.arms[0].health ?? DEFAULT_HEALTH_SETTINGS);
    const shared = { healthTracker: this.health };
    this.arms = options.arms.map((o) => new Router(backends, { ...o, ...shared }));
    this.shadow =
      options.shadow === undefined
        ? undefined
        : new Router(backends, { ...options.shadow, ...shared, passive: true });
  }

  private all(): Router[] {
    return this.shadow === undefined ? [...this.arms] : [...this.arms, this.shadow];
  }

  /** The arm of a request with this arm key. */
  armFor(armKey: number): ArmIndex {
    return this.arms.length > 1 ? armOf(armKey, this.percentB) : 0;
  }

  /**
   * `full`: backends at their bound on requests in flight (inflight-bound.ts), left out while another usable
   * one has room; the shadow is told the same, so it decides over the backends that could really serve.
   */
  route(
    req: RouteRequest,
    armKey: number,
    ctx: RouteContext,
    avoid?: string | readonly string[],
    full?: ReadonlySet<string>,
  ): PoolDecision {
    const arm = this.armFor(armKey);
    const { decision, ticket } = this.arms[arm]!.route(req, ctx, avoid, full);
    if (this.shadow === undefined) return { arm, decision, ticket: { arm, ticket } };
    const s = this.shadow.route(req, ctx, avoid, full);
    return {
      arm,
      decision,
      shadow: { backendId: s.decision.backendId, expectedCachedTokens: s.decision.expectedCachedTokens },
      ticket: { arm, ticket, shadow: s.ticket },
    };
  }

  /** Ends a request: its arm learns the outcome (and judges health), the shadow what applies to it. */
  complete(t: PoolTicket, outcome: RouteOutcome, ctx: RouteContext): HealthChange {
    if (t.shadow !== undefined) this.shadow?.complete(t.shadow, shadowOutcome(t, outcome), ctx);
    return this.arms[t.arm]!.complete(t.ticket, outcome, ctx);
  }

  /**
   * A request's first token streamed back (Router.firstToken): its arm is told; the shadow only when it chose the
   * same backend (elsewhere that prefill never ran, so its lateness says nothing of the shadow's ledger).
   */
  firstToken(t: PoolTicket, ctx: RouteContext): void {
    if (t.shadow !== undefined && t.shadow.backendId === t.ticket.backendId)
      this.shadow?.firstToken(t.shadow, ctx);
    this.arms[t.arm]!.firstToken(t.ticket, ctx);
  }

  /**
   * Counts in flight a request an earlier holder of this state routed to `backendId` for `arm`
   * (Router.restore); the shadow is not told (it never feeds health or load). undefined for a
   * backend not in the pool.
   */
  restore(backendId: string, arm: ArmIndex, routedAt: number): PoolTicket | undefined {
    const a = (arm < this.arms.length ? arm : 0) as ArmIndex;
    const ticket = this.arms[a]!.restore(backendId, routedAt);
    return ticket === undefined ? undefined : { arm: a, ticket };
  }

  /** A decision made without us (the Worker decided alone): arm A learns it, as the pool's default. */
  observe(
    backendId: string,
    req: RouteRequest,
    outcome: RouteOutcome,
    routedAt: number,
    ctx: RouteContext,
  ): HealthChange {
    return this.arms[0]!.observe(backendId, req, outcome, routedAt, ctx);
  }

  setBackends(backends: readonly BackendSpec[]): void {
    for (const r of this.all()) r.setBackends(backends);
  }

  setHealthSettings(settings: HealthSettings): void {
    this.health.setSettings(settings);
  }

  throttle(id: string, until: number): void {
    for (const r of this.all()) r.throttle(id, until);
  }

  /** Drains (or undrains) a backend in every Router of the pool; false for an unknown id. */
  setDrained(id: string, drained: boolean): boolean {
    let known = false;
    for (const r of this.all()) known = r.setDrained(id, drained) || known;
    return known;
  }

  /**
   * An operator's drain: as setDrained, but never of the last backend not
   * drained (a drain is a deliberate hold, not a fault: failing open over it
   * would route to the backend the operator is taking down) unless
   * `mayEmpty`: this Router is one cell of a pool whose other cells have
   * backends in rotation, which take its requests (RouteResult no_usable).
   */
  drain(id: string, drained: boolean, mayEmpty = false): "ok" | "unknown_backend" | "last_backend" {
    const ids = this.arms[0]!.stats().backends.map((b) => b.id);
    if (!ids.includes(id)) return "unknown_backend";
    const held = new Set(this.drainedIds());
    if (drained && !mayEmpty && !held.has(id) && held.size + 1 >= ids.length) return "last_backend";
    this.setDrained(id, drained);
    return "ok";
  }

  drainedIds(): string[] {
    return this.arms[0]!.drainedIds();
  }

  /**
   * Whether any backend can serve: neither drained, ejected, nor past `fall` consecutive faults (health's
   * `failing`: kept in rotation only by the cap on ejections, which never ejects a pool's last backends); or
   * every one is failing and none probed (ejected or watched: watchHeld), so no probe would tell of a recovery
   * (HealthTracker.anyUsable). The
   * RouterDO of a cell answers no_usable when none can and the Worker may send the request to another cell.
   */
  anyUsable(): boolean {
    return this.health.anyUsable(new Set(this.drainedIds()));
  }

  /**
   * When every backend not drained is failing, schedules a probe of those the cap on ejections holds in
   * (HealthTracker.watchHeld): a cell asked with a request the Worker can move elsewhere then answers no_usable
   * even when its only backend is held in by the cap, and hears of its recovery from the probe. True when a
   * probe was scheduled (the health rows changed).
   */
  watchHeld(now: number): boolean {
    return this.health.watchHeld(new Set(this.drainedIds()), now);
  }

  /**
   * Whether a retry of a request whose attempts failed on `avoid` (every backend it tried) has a backend here that
   * is none of them, not drained, not throttled at `now` (a 429's or 503's retry-after: it would only answer
   * busy again), nor suspect (ejected, or faulted since its last success: HealthTracker.fitForRetry). The RouterDO
   * of a cell answers a movable retry no_usable when none has, and the Worker sends the retry to another cell;
   * when no other cell takes it, it comes back here and routes as one RouterDO would (onto a throttled backend
   * as the last resort: Router.route).
   */
  fitForRetry(avoid: readonly string[], now: number): boolean {
    const held = new Set([...this.drainedIds(), ...this.arms[0]!.throttledIds(now), ...avoid]);
    return this.health.fitForRetry(held);
  }

  /**
   * Whether a backend outside `ids` (and the drained) can serve, as anyUsable judges one: where a busy retry can
   * move on to (the RouterDO answers nowhere_else when none can).
   */
  usableBesides(ids: readonly string[]): boolean {
    return this.arms[0]!.usableBesides(ids);
  }

  /** Forgets every arm's and the shadow's affinity index. */
  resetAffinity(): void {
    for (const r of this.all()) r.resetAffinity();
  }

  probed(id: string, ok: boolean, now: number): HealthChange {
    return this.arms[0]!.probed(id, ok, now);
  }

  dueProbes(now: number): string[] {
    return this.health.due(now);
  }

  nextProbeAt(): number | undefined {
    return this.health.nextProbeAt();
  }

  healthRows(): HealthRow[] {
    return this.health.rows();
  }

  loadHealth(rows: readonly HealthRow[]): void {
    this.health.load(rows);
  }

  resetHealth(id: string): void {
    this.health.reset(id);
  }

  /** The backends on probation at `now` (HealthTracker.onProbation): route answers carry them to the Worker. */
  onProbation(now: number): ProbationRow[] {
    return this.health.onProbation(now);
  }

  /** Whether a usable backend outside `full` is left (Router.hasRoom; every arm's availability is the same). */
  hasRoom(full: ReadonlySet<string>, now: number): boolean {
    return this.arms[0]!.hasRoom(full, now);
  }

  /** Requests in flight on a backend, every arm's. */
  inflight(id: string): number {
    let n = 0;
    for (const r of this.arms) n += r.inflight(id);
    return n;
  }

  ejectedIds(): string[] {
    return this.arms[0]!.ejectedIds();
  }

  /** Each arm's stats (arm A first), and the shadow's. */
  stats(now: number): { arms: RouterStats[]; shadow?: RouterStats } {
    const arms = this.arms.map((r) => r.stats(now));
    return this.shadow === undefined ? { arms } : { arms, shadow: this.shadow.stats(now) };
  }
}

/**
 * The outcome as the shadow may learn it: the engine's figures only when the
 * shadow chose the backend that served; elsewhere only whether a request of
 * this prefix was computed (a fault of the real backend says nothing about
 * the shadow's choice, which would have served it).
 */
function shadowOutcome(t: PoolTicket, outcome: RouteOutcome): RouteOutcome {
  if (t.shadow?.backendId === t.ticket.backendId) return outcome;
  return { ok: outcome.ok || outcome.backendFault === true };
}
