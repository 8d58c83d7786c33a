/**
 * RouterDO: one per model pool (one per cell of a pool split into cells:
 * src/worker/router/pool-cells.ts; it routes over the backends its spec
 * lists and never knows it is a cell), a thin durable shell around the routing core
 * (src/routing). It owns the in-flight leases, stores the fleet spec and the
 * Router's health rows (SQLite), spends the pool's retry budget, and keeps
 * one alarm set to the earliest deadline (lease expiry or a health probe).
 * Health itself — ejection, throttling, restoration — is decided by the
 * Router; this shell feeds it outcomes and probe results and persists what
 * changed. It decides; it never sees a token of the response. With
 * ENGINE_SCRAPE_MS on, the same alarm reads the backends' /metrics
 * (engine-scrape.ts) and the Routers route on those readings.
 *
 * Leases live in memory only, and an object is evicted after some idle time
 * and restarted by every deploy. Persisting them (a row per route, deleted
 * at its end) would make every routing decision wait for its write to be
 * confirmed (a SQLite-backed object's output gate holds a response until its
 * writes are durable, replicated off the machine: Cloudflare, "Zero-latency
 * SQLite storage in every Durable Object", 2024) and bill two row writes per
 * request. Instead, nothing is written on the hot path: every route answer
 * names this instance; the Worker holding a stream keeps its lease
 * (src/worker/router/held-leases.ts), re-announces it to an instance that
 * did not grant it (reopen: counted in flight again, same deadline), and
 * reports its end with what it holds, so a new instance still applies it to
 * health and the counters, once (foreign-leases.ts). The cost: a fresh
 * instance decides without the streams it was not yet told of, until the
 * first answer to each holding isolate (that isolate's next route call).
 *
 * The pool's Routers (src/routing/pool-router.ts) are one or two A/B arms
 * and an optional shadow; what their traffic did is counted in PoolStats
 * and read as one mergeable snapshot. Operators drain backends (persisted)
 * and reset the affinity index through it (the admin API).
 */
import { DurableObject } from "cloudflare:workers";
import {
  cellSlots,
  fullBackends,
  type HealthChange,
  headroomSlots,
  KeyDemand,
  type KeyedRetryBudget,
  keyedPoolBudget,
  LeaseEndClock,
  PoolRouter,
  type PoolTicket,
  shareVerdict,
} from "../src/routing";
import { RecentFamilies, relayCellFamilies } from "../src/routing/cell-families";
import { CellLoads, relayCellLoads } from "../src/routing/cell-loads";
import {
  CARRIED_COMPLETES_MAX,
  FOREIGN_LEASES_REMEMBERED,
  ROUTER_CELLS_MAX,
  STATS_SAVE_MS,
} from "../src/routing/defaults";
import type { RouteContext, RouteOutcome, RouteRequest } from "../src/routing/types";
import { backendsById } from "../src/worker/config";
import { isKeyId } from "../src/worker/gateway-keys";
import { PROBE_TIMEOUT_MS, probeBackend } from "../src/worker/health-probe";
import {
  isJudgedByRetry,
  MAX_THROTTLE_MS,
  throttledUntil,
  toRouteOutcome,
} from "../src/worker/router/outcomes";
import {
  armPolicies,
  backendSpecs,
  healthSettings,
  poolRouterOptions,
  SHADOW_POLICY,
} from "../src/worker/router/pool-settings";
import type {
  AdminInput,
  AdminResult,
  BackendStatus,
  CarriedComplete,
  CompleteAllResult,
  CompleteInput,
  CompleteResult,
  DrainInput,
  DrainLockInput,
  DrainLockResult,
  FirstTokenResult,
  HeldLease,
  ObserveInput,
  ObserveResult,
  PoolSpec,
  ProgressResult,
  RelayingResult,
  RelayNotice,
  ReopenedLease,
  ReopenResult,
  RouteInput,
  RouteResult,
  SnapshotResult,
  StatsResult,
  UsageTotals,
} from "../src/worker/router/router-rpc";
import type { ArmLabel } from "../src/worker/stats/pool-snapshot";
import { type DecisionFigures, PoolStats, poolSnapshot } from "../src/worker/stats/pool-stats";
import { BackendChecker } from "./backend-check";
import { DeadlineLock } from "./drain-lock";
import { EngineScraper } from "./engine-scrape";
import { FleetStore } from "./fleet-store";
import { ForeignLeases } from "./foreign-leases";
import { LeaseBook } from "./lease-book";

/** What a lease holds from its decision to its end. */
interface Ticket {
  readonly pool: PoolTicket;
  readonly routedAt: number;
  /** The decision's hit figures; undefined for a lease an earlier instance granted (reopen). */
  readonly figures: DecisionFigures | undefined;
}

const ARM_LABELS: readonly ArmLabel[] = ["a", "b"];

/** Retries the budget holds when the pool is idle (the bucket's size); one client key takes at most half. */
const RETRY_BURST = 10;
/** A shed request is told to come back after at least this (retry-after is in whole seconds). */
const SHED_RETRY_MIN_MS = 1000;

/**
 * A spec with the settings added after specs were first stored, at their
 * "off" values when absent: a spec saved by an older version (reloaded after
 * a deploy) or sent by a Worker of the previous version during a rollout
 * must route as it did, never throw (an undefined scrape interval made the
 * alarm time NaN).
 */
function withLaterSettings(spec: PoolSpec): PoolSpec {
  const partial = spec as Omit<
    PoolSpec,
    "engineScrapeMs" | "maxInflightPerBackend" | "backendCheckSeconds" | "keyShareHeadroomPercent"
  > & {
    engineScrapeMs?: number;
    maxInflightPerBackend?: number;
    backendCheckSeconds?: number;
    keyShareHeadroomPercent?: number;
  };
  return {
    ...partial,
    engineScrapeMs: partial.engineScrapeMs ?? 0,
    maxInflightPerBackend: partial.maxInflightPerBackend ?? 0,
    backendCheckSeconds: partial.backendCheckSeconds ?? 0,
    keyShareHeadroomPercent: partial.keyShareHeadroomPercent ?? 0,
  };
}

/** The router options a spec implies that need a fresh Router (the affinity index is keyed by them). */
function routerOptionsKey(spec: PoolSpec): string {
  return `${spec.policy}|${spec.blockTokens}|${spec.balanceFactor}|${spec.abPolicy}|${spec.abPercent}|${spec.shadow}|${spec.engineScrapeMs}`;
}

/** A retry whose first attempt got a 500 or a 404: the verdict on that backend waits for the retry's outcome. */
interface PendingVerdict {
  readonly backendId: string;
  readonly routedAt: number;
}

type MutableUsage = { -readonly [K in keyof UsageTotals]: UsageTotals[K] };

export class RouterDO extends DurableObject<Env> {
  private readonly store: FleetStore;
  private readonly leases = new LeaseBook<Ticket>();
  /**
   * This instance (RouteResult.instance): an evicted or restarted object forgets its leases, and the
   * Workers that hold them tell a lease of another instance by it (foreign-leases.ts).
   */
  private readonly instance = crypto.randomUUID();
  private readonly startedAt = Date.now();
  private readonly foreign = new ForeignLeases(FOREIGN_LEASES_REMEMBERED);
  private readonly scraper = new EngineScraper();
  private readonly checker = new BackendChecker();
  private readonly verdicts = new Map<string, PendingVerdict>();
  /** The lock a pool split in cells takes here, in its first cell, around each drain (drainLock()). */
  private readonly drainGate = new DeadlineLock();
  /**
   * When (our clock) each backend was last seen producing output, as any isolate reported it: a request
   * finished with an answer, or a notice that its answer bytes were being relayed (relaying()). The
   * freshest wins (progress()). One entry per backend of the spec; in memory only: a restarted object
   * knows none.
   */
  private readonly lastOutput = new Map<string, number>();
  /** First tokens heard for a lease open here (firstToken()), since this instance started (stats()). */
  private firstTokens = 0;
  /** When this instance's recent leases ended: a shed request's retry-after (inflight-bound.ts). */
  private readonly leaseEnds = new LeaseEndClock();
  /** The keys that asked this cell for a slot lately, while the bound is on (src/routing/key-share.ts). */
  private readonly demand = new KeyDemand();
  private router: PoolRouter | undefined;
  private stats_: PoolStats | undefined;
  private budget: KeyedRetryBudget | undefined;
  private spec: PoolSpec | undefined;
  private version: string | undefined;
  private readonly usage: MutableUsage = {
    completed: 0,
    failed: 0,
    expired: 0,
    withUsage: 0,
    promptTokens: 0,
    cachedTokens: 0,
    outputTokens: 0,
    retried: 0,
    retriesRefused: 0,
    ejections: 0,
    restorations: 0,
    observed: 0,
    shed: 0,
  };
  /** Epoch ms since which the arms' figures count (PoolSnapshot.since): kept across evictions. */
  private countingSince = Date.now();
  /** The counters changed since they were last saved (the alarm saves them: STATS_SAVE_MS). */
  private countersDirty = false;
  private countersSavedAt = 0;
  /** The alarm we believe is scheduled (undefined: none), so the hot path rarely touches storage. */
  private alarmAt: number | undefined;
  /** What this cell knows of every cell's load, relayed between the isolates that call it (cell-loads.ts). */
  private cellView: CellLoads | undefined;
  /** The families callers newly placed in this cell, relayed on every response (cell-families.ts). */
  private readonly cellFamilies = new RecentFamilies();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new FleetStore(ctx.storage.sql);
    void ctx.blockConcurrencyWhile(async () => {
      this.store.migrate();
      const saved = this.store.loadSpec();
      if (saved !== undefined) {
        this.applySpec(saved.version, saved.spec, false);
        this.router!.loadHealth(this.store.loadHealth(saved.spec));
        for (const id of this.store.loadDrained()) this.router!.setDrained(id, true);
        this.restoreCounters();
      }
      this.alarmAt = (await ctx.storage.getAlarm()) ?? undefined;
    });
  }

  private context(): RouteContext {
    return { now: Date.now(), random: Math.random };
  }

  private applySpec(version: string, given: PoolSpec, persist: boolean): void {
    const spec = withLaterSettings(given);
    const specs = backendSpecs(spec);
    const previous = this.spec;
    if (
      this.router === undefined ||
      previous === undefined ||
      routerOptionsKey(previous) !== routerOptionsKey(spec)
    ) {
      // Policy, block size or arms changed: the old affinity index means nothing under the new keys.
      const old = this.router;
      this.router = new PoolRouter(specs, poolRouterOptions(spec, this.scraper.book.read));
      this.stats_ = new PoolStats(armPolicies(spec), spec.shadow ? SHADOW_POLICY : undefined);
      // New arms count from now (saved, so a restart does not bring the old arms' figures back).
      this.countingSince = Date.now();
      this.countersChanged();
      if (old !== undefined) {
        this.router.loadHealth(old.healthRows());
        for (const id of old.drainedIds()) this.router.setDrained(id, true);
      }
      // Dropped leases end unknown to the new arms; a reopened one (no figures of this instance) too, not
      // as an earlier instance's lease (endForeign would count it).
      for (const l of this.leases.expire(Number.POSITIVE_INFINITY))
        if (l.ticket.figures === undefined) this.foreign.markEnded(l.id);
      this.verdicts.clear();
    } else {
      this.router.setHealthSettings(healthSettings(spec));
      this.router.setBackends(specs);
      // Leases on removed backends can no longer be released into the new fleet: drop them.
      const ids = new Set(specs.map((b) => b.id));
      for (const l of [...this.leases.all()]) if (!ids.has(l.backendId)) this.leases.take(l.id);
    }
    // Same id, new address: a different server, with no history.
    if (previous !== undefined) {
      const urls = new Map(previous.backends.map((b) => [b.id, b.url]));
      for (const b of spec.backends) {
        const was = urls.get(b.id);
        if (was !== undefined && was !== b.url) {
          this.router.resetHealth(b.id);
          this.lastOutput.delete(b.id);
        }
      }
    }
    const kept = new Set(spec.backends.map((b) => b.id));
    for (const id of [...this.lastOutput.keys()]) if (!kept.has(id)) this.lastOutput.delete(id);
    const targets = spec.backends.map((b) => ({ id: b.id, url: b.url, ...this.configured(b) }));
    this.scraper.configure(spec.engineScrapeMs, targets);
    this.checker.configure(spec.backendCheckSeconds, spec.model, targets);
    if (this.budget === undefined || this.budget.ratio !== spec.retryBudgetPercent / 100)
      this.budget = keyedPoolBudget(spec.retryBudgetPercent / 100, RETRY_BURST);
    this.spec = spec;
    this.version = version;
    if (persist) {
      this.store.saveSpec(version, spec);
      this.store.saveHealth(spec, this.router.healthRows());
    }
  }

  /** Chooses a backend for one request and opens a lease on it. */
  async route(input: RouteInput): Promise<RouteResult> {
    // The caller's finished requests first: their slots are free for this decision.
    if (input.completes !== undefined) this.endAll(input.completes, this.context());
    if (input.spec !== undefined && input.fleetVersion !== this.version) {
      this.applySpec(input.fleetVersion, input.spec, true);
    }
    if (input.relaying !== undefined) this.hearRelaying(input.relaying, Date.now());
    const router = this.router;
    if (router === undefined || this.spec === undefined || input.fleetVersion !== this.version) {
      return { ok: false, code: "fleet_stale", message: `RouterDO holds fleet ${this.version ?? "none"}` };
    }
    if (this.spec.backends.length === 0)
      return { ok: false, code: "no_backends", message: "this pool has no backends" };
    const ctx = this.context();
    // A first attempt the Worker can place in another cell is not sent to backends that are all drained, ejected
    // or failing (kept in rotation only by the ejection cap, which never ejects a cell's last backends): the
    // answer says so, and the Worker's cell chooser passes this cell over (cell-chooser.ts). Those the cap holds
    // in are probed from now on (watchHeld: a lone backend in its cell is never ejected, and no request of its
    // own would tell of its recovery); one RouterDO is never asked with movable, so its pool is probed as before.
    // The alarm is kept for the next health probe, so the cell recovers with no request of its own.
    if (input.movable === true && input.retryOf === undefined) {
      if (router.watchHeld(ctx.now)) this.store.saveHealth(this.spec, router.healthRows());
      if (!router.anyUsable()) {
        await this.scheduleAlarm(this.soonest(router.nextProbeAt()));
        return {
          ok: false,
          code: "no_usable",
          message: "every backend of this cell is drained, ejected or failing",
        };
      }
    }
    // The bound on requests in flight (off: undefined, and nothing below changes). A first attempt finds no
    // room: shed before any budget or lease. A retry is not shed: its failed lease ends with it, freeing a slot.
    const spec = this.spec;
    const full = fullBackends(spec.backends, spec.maxInflightPerBackend, (id) => router.inflight(id));
    if (full !== undefined && input.retryOf === undefined) {
      // Every asking key counts as contending for a while, shed or not: one shed because another key held
      // every slot is still waiting when it comes back (key-share.ts).
      if (input.clientKey !== undefined && spec.keyShareHeadroomPercent > 0)
        this.demand.asked(input.clientKey, ctx.now);
      if (!router.hasRoom(full, ctx.now)) return this.shed(ctx.now, input.movable === true);
      const over = this.overShare(spec, router, input.clientKey, ctx.now);
      if (over !== undefined) return this.shedOverShare(ctx.now, input.movable === true, over);
    }
    let verdict: PendingVerdict | undefined;
    let avoid: string | undefined;
    let tried: readonly string[] = [];
    if (input.retryOf !== undefined) {
      const failed = this.leases.get(input.retryOf.leaseId);
      avoid = failed?.backendId ?? input.retryOf.held?.backendId;
      tried = input.retryOf.tried ?? [];
      // A busy retry moving on (attempts.ts) is sent on only where a backend its attempts did not meet can serve:
      // the Worker counts a third backend from BACKENDS, and one drained or ejected left this decision to fall
      // back on those already tried (the first attempt's, which failed). With cells (movable), fitForRetry below
      // sends it to another cell instead. Before the budget: nothing is spent on a move that cannot happen.
      if (tried.length > 0 && input.movable !== true && !router.usableBesides(avoidedBy(avoid, tried))) {
        this.finish(
          input.retryOf.leaseId,
          { ok: false, failure: input.retryOf.failure, ...retryAfter(input.retryOf) },
          ctx,
          input.retryOf.held,
        );
        await this.scheduleAlarm(this.soonest(router.nextProbeAt()));
        return {
          ok: false,
          code: "nowhere_else",
          message: "no backend here but those the request's attempts met can take it",
        };
      }
      // Asked first: a refused retry leaves the attempt's failure as the client's answer (failed); a granted
      // one moves the request to the retry (the arms count the attempt as retried, not as an error).
      const granted = this.budget!.tryWithdraw(input.clientKey);
      this.finish(
        input.retryOf.leaseId,
        {
          ok: false,
          failure: input.retryOf.failure,
          ...retryAfter(input.retryOf),
          ...(granted ? { retried: true as const } : {}),
        },
        ctx,
        input.retryOf.held,
      );
      if (!granted) {
        this.usage.retriesRefused++;
        this.countersChanged();
        await this.scheduleAlarm(this.soonest(router.nextProbeAt()));
        return { ok: false, code: "retry_budget_exhausted", message: "the pool's retry budget is spent" };
      }
      this.usage.retried++;
      if (isJudgedByRetry(input.retryOf.failure) && failed !== undefined)
        verdict = { backendId: failed.backendId, routedAt: failed.ticket.routedAt };
      // With cells, a retry whose every other backend here is suspect (faulted since its last success, ejected
      // or drained: the cell's backends likely share the fault) is sent to another cell: the lease is ended and
      // the budget spent above, as for any retry. Not a 500/404's retry: its outcome is that backend's verdict.
      if (
        input.movable === true &&
        verdict === undefined &&
        !router.fitForRetry(avoidedBy(avoid, tried), ctx.now)
      ) {
        await this.scheduleAlarm(this.soonest(router.nextProbeAt()));
        return {
          ok: false,
          code: "no_usable",
          message: "no backend of this cell but the failed one can take the retry unsuspected",
        };
      }
    } else if (input.movedRetry !== undefined) {
      // Its budget was spent in its first cell; it is still one request. The avoided backend, when asked back.
      avoid = input.movedRetry.avoid;
      tried = input.movedRetry.tried ?? [];
    } else {
      this.budget!.deposit(input.clientKey);
    }
    const req: RouteRequest = {
      blocks: input.blocks,
      promptTokens: input.promptTokens,
      ...(input.outputTokens !== undefined ? { outputTokens: input.outputTokens } : {}),
      ...(input.promptKey !== undefined ? { promptKey: input.promptKey } : {}),
      ...(input.prompts !== undefined ? { prompts: input.prompts } : {}),
      ...(input.unconfirmedTokens !== undefined ? { unconfirmedTokens: input.unconfirmedTokens } : {}),
    };
    const pick = router.route(req, input.armKey ?? 0, ctx, avoidedBy(avoid, tried), full);
    this.scraper.routed(ctx.now);
    this.checker.routed(ctx.now);
    const { arm, decision, shadow, ticket } = pick;
    const leaseId = crypto.randomUUID();
    const deadline = ctx.now + this.spec.leaseTtlSeconds * 1000;
    // The hit figures' denominator is the count their numerators were taken of: routing's (prompt-bound.ts).
    const figures = this.stats_!.routed(pick, decision.routed?.promptTokens ?? req.promptTokens);
    this.countersChanged();
    this.leases.add({
      id: leaseId,
      backendId: decision.backendId,
      ticket: { pool: ticket, routedAt: ctx.now, figures },
      deadline,
      ...(input.clientKey !== undefined ? { key: input.clientKey } : {}),
    });
    if (verdict !== undefined) this.verdicts.set(leaseId, verdict);
    await this.scheduleAlarm(
      this.soonest(deadline, router.nextProbeAt(), this.scraper.nextAt(), this.checker.nextAt()),
    );
    const ejected = [...router.ejectedIds(), ...router.drainedIds()];
    const probation = router.onProbation(ctx.now);
    return {
      ok: true,
      backendId: decision.backendId,
      leaseId,
      reason: decision.reason,
      expectedCachedTokens: decision.expectedCachedTokens,
      availableCachedTokens: decision.availableCachedTokens,
      inflightAtDecision: decision.inflightAtDecision,
      ...(decision.routed !== undefined ? { routed: decision.routed } : {}),
      policy: armPolicies(this.spec)[arm]!,
      arm: ARM_LABELS[arm]!,
      ...(shadow !== undefined ? { shadow } : {}),
      ...(ejected.length > 0 ? { ejected } : {}),
      ...(probation.length > 0 ? { probation } : {}),
      cellInflight: this.leases.size,
      instance: this.instance,
      ...(input.cellLoads !== undefined ? this.relayLoads(input.cellLoads, ctx.now) : {}),
    };
  }

  /**
   * Whether `key` is over its fair share of this cell's slots while other keys contend for them
   * (src/routing/key-share.ts): its held count and share when so, else undefined. Off (undefined) with
   * KEY_SHARE_HEADROOM_PERCENT 0, without a key (one key, or a Worker of an earlier version), and when a
   * usable backend is unbounded.
   */
  private overShare(
    spec: PoolSpec,
    router: PoolRouter,
    key: string | undefined,
    now: number,
  ): { held: number; share: number } | undefined {
    if (key === undefined || spec.keyShareHeadroomPercent <= 0) return undefined;
    const out = new Set([...router.ejectedIds(), ...router.drainedIds()]);
    const cell = cellSlots(
      spec.backends,
      spec.maxInflightPerBackend,
      (id) => !out.has(id),
      (id) => router.inflight(id),
    );
    if (cell === undefined) return undefined;
    const held = this.leases.heldBy(key);
    const verdict = shareVerdict({
      slots: cell.slots,
      inflight: cell.inflight,
      held,
      contenders: this.demand.contenders(key, now, this.leases.holders()),
      headroom: headroomSlots(cell.slots, spec.keyShareHeadroomPercent),
    });
    return verdict.admit ? undefined : { held, share: verdict.share };
  }

  /**
   * The cell has room, but not for this key (overShare): shed as at_capacity with `overShare`, counted as
   * shed. Told the plain gap between lease ends, without taking a place in the queue of clients shed for a
   * full cell (LeaseEndClock.nextSlotMs): a flooding key's own sheds must not push back those of the keys
   * waiting for their share.
   */
  private async shedOverShare(
    now: number,
    movable: boolean,
    over: { held: number; share: number },
  ): Promise<RouteResult> {
    await this.countShed(movable);
    const retryAfterMs = this.leaseEnds.retryAfterMs(
      now,
      this.oldestRoutedAt(),
      SHED_RETRY_MIN_MS,
      MAX_THROTTLE_MS,
    );
    return {
      ok: false,
      code: "at_capacity",
      message: `this key holds ${over.held} of this pool's slots, at or above its share of ${over.share} while other keys wait`,
      retryAfterMs,
      overShare: over,
    };
  }

  /**
   * Counts a shed request in usage.shed, unless the Worker may still place it in another cell
   * (RouteInput.movable), and keeps the alarm for the next probe (shed and shedOverShare).
   */
  private async countShed(movable: boolean): Promise<void> {
    if (!movable) {
      this.usage.shed++;
      this.countersChanged();
    }
    await this.scheduleAlarm(this.soonest(this.router?.nextProbeAt()));
  }

  /** When the oldest lease in flight was granted; undefined: none. */
  private oldestRoutedAt(): number | undefined {
    let oldest: number | undefined;
    for (const l of this.leases.all())
      if (oldest === undefined || l.ticket.routedAt < oldest) oldest = l.ticket.routedAt;
    return oldest;
  }

  /**
   * Every usable backend is at its bound: no lease, no retry budget, no health verdict; counted (usage.shed)
   * and answered with when to come back: one mean gap between recent lease ends (before any, the age of the
   * oldest lease in flight) behind the clients already shed (LeaseEndClock.nextSlotMs), within
   * SHED_RETRY_MIN_MS..MAX_THROTTLE_MS.
   */
  private async shed(now: number, movable: boolean): Promise<RouteResult> {
    await this.countShed(movable);
    // A movable request's slot in this cell's queue of shed clients is kept (a retry-after from here may still
    // be the one it gets).
    const retryAfterMs = this.leaseEnds.nextSlotMs(
      now,
      this.oldestRoutedAt(),
      SHED_RETRY_MIN_MS,
      MAX_THROTTLE_MS,
    );
    return {
      ok: false,
      code: "at_capacity",
      message: `every usable backend of this pool is at its bound of requests in flight (${this.leases.size} in flight)`,
      retryAfterMs,
    };
  }

  /**
   * Takes the caller's figures of every cell, sets this cell's own and answers with the freshest of each.
   * A malformed claim (a cell index outside the figures, more cells than a pool may have) is ignored:
   * figures only steer the choice of cell, they never fail a route.
   */
  private relayLoads(
    claim: NonNullable<RouteInput["cellLoads"]>,
    now: number,
  ): { cellLoads?: number[]; cellFamilies?: number[] } {
    const { cell, figures } = claim;
    const size = figures.length / 2;
    if (!Number.isInteger(size) || size < 1 || size > ROUTER_CELLS_MAX) return {};
    if (!Number.isInteger(cell) || cell < 0 || cell >= size) return {};
    if (this.cellView?.size !== size) this.cellView = new CellLoads(size);
    return {
      cellLoads: relayCellLoads(this.cellView, cell, this.leases.size, figures, now),
      cellFamilies: relayCellFamilies(this.cellFamilies, claim.placed),
    };
  }

  /** Ends a lease: releases the in-flight slot and feeds what happened back to the router. */
  async complete(leaseId: string, input: CompleteInput, held?: HeldLease): Promise<CompleteResult> {
    const ctx = this.context();
    const backendId = this.finish(leaseId, input, ctx, held);
    if (backendId === undefined) {
      return { ok: false, code: "unknown_lease", message: `lease ${leaseId} is unknown or already ended` };
    }
    await this.scheduleAlarm(this.soonest(this.router?.nextProbeAt()));
    return { ok: true, backendId };
  }

  /**
   * A streamed answer's first token reached the Worker's relay (src/worker/router/router-client.ts noticeFirstToken):
   * the lease's prefill is over, and the routing policy learns how late against its predicted end
   * (Router.firstToken). The time is this object's clock when the call arrives, not the Worker's: the ledger's
   * predicted ends are on this clock (another machine's need not agree, and a Worker's Date.now() stands still
   * between its I/O), and the call leaves the Worker as the first content is relayed, so the transit (a few ms in
   * the colo) is all it adds. An unknown or ended lease, or one an earlier instance granted (this one never
   * predicted its prefill), is ignored; nothing is stored and no alarm is scheduled.
   */
  async firstToken(leaseId: string): Promise<FirstTokenResult> {
    const lease = typeof leaseId === "string" ? this.leases.get(leaseId) : undefined;
    if (lease === undefined || this.router === undefined || lease.ticket.figures === undefined)
      return { ok: true, heard: false };
    this.router.firstToken(lease.ticket.pool, this.context());
    this.firstTokens++;
    return { ok: true, heard: true };
  }

  /**
   * Ends a batch of leases (an isolate's reports that no route call carried in time, complete-carry.ts);
   * unknown or already ended ones are skipped.
   */
  async completeAll(items: readonly CarriedComplete[]): Promise<CompleteAllResult> {
    const ended = this.endAll(items, this.context());
    await this.scheduleAlarm(this.soonest(this.router?.nextProbeAt()));
    return { ok: true, ended };
  }

  /** Ends at most CARRIED_COMPLETES_MAX of `items` (the Worker never sends more); returns how many were open. */
  private endAll(items: readonly CarriedComplete[], ctx: RouteContext): number {
    let ended = 0;
    const n = Math.min(items.length, CARRIED_COMPLETES_MAX);
    for (let i = 0; i < n; i++)
      if (this.finish(items[i]!.leaseId, items[i]!.outcome, ctx, items[i]!.held) !== undefined) ended++;
    return ended;
  }

  /**
   * Counts in flight again the leases a Worker still holds open that an earlier instance granted
   * (this one started after them: an eviction or a deploy emptied the lease book), so the load
   * bound sees their streams; each keeps the deadline it was granted with. At most
   * CARRIED_COMPLETES_MAX per call. Skipped: leases of this instance, known or already ended here,
   * past their deadline, or on a backend no longer in the pool.
   */
  async reopen(items: readonly ReopenedLease[]): Promise<ReopenResult> {
    const router = this.router;
    const spec = this.spec;
    if (router === undefined || spec === undefined) return { ok: true, reopened: 0 };
    const ctx = this.context();
    let reopened = 0;
    let earliest: number | undefined;
    const n = Math.min(items.length, CARRIED_COMPLETES_MAX);
    for (let i = 0; i < n; i++) {
      const { leaseId, held, key } = items[i]!;
      if (held.instance === this.instance || this.leases.get(leaseId) !== undefined) continue;
      if (this.foreign.hasEnded(leaseId)) continue;
      const routedAt = this.foreignRoutedAt(held, ctx.now);
      const deadline = routedAt + spec.leaseTtlSeconds * 1000;
      if (deadline <= ctx.now) continue;
      const pool = router.restore(held.backendId, armIndex(held.arm), routedAt);
      if (pool === undefined) continue;
      this.leases.add({
        id: leaseId,
        backendId: held.backendId,
        ticket: { pool, routedAt, figures: undefined },
        deadline,
        // Its key's share counts it again (overShare), as the instance that granted it did; anything but a key
        // id is dropped (bounded: one short string per lease, which the lease book already bounds).
        ...(isKeyId(key) ? { key } : {}),
      });
      reopened++;
      earliest = Math.min(earliest ?? deadline, deadline);
    }
    await this.scheduleAlarm(earliest);
    return { ok: true, reopened };
  }

  /** When a lease of an earlier instance was granted, by our clock: never after this instance started. */
  private foreignRoutedAt(held: HeldLease, now: number): number {
    const age = Number.isFinite(held.ageMs) ? Math.max(0, held.ageMs) : 0;
    return Math.min(now - age, this.startedAt);
  }

  /** Learns from a decision the Worker made without us (we were unreachable): affinity and health. */
  async observe(input: ObserveInput): Promise<ObserveResult> {
    const router = this.router;
    if (router === undefined || input.fleetVersion !== this.version)
      return { ok: false, code: "fleet_stale", message: `RouterDO holds fleet ${this.version ?? "none"}` };
    if (!this.spec!.backends.some((b) => b.id === input.backendId))
      return { ok: false, code: "unknown_backend", message: `backend ${input.backendId} is not in the pool` };
    const ctx = this.context();
    const outcome = this.outcomeOf(input.backendId, input.outcome, ctx);
    this.noteSuccess(input.backendId, input.outcome, ctx.now);
    const change = router.observe(
      input.backendId,
      {
        blocks: input.blocks,
        promptTokens: input.promptTokens,
        ...(input.prompts !== undefined ? { prompts: input.prompts } : {}),
        ...(input.unconfirmedTokens !== undefined ? { unconfirmedTokens: input.unconfirmedTokens } : {}),
      },
      outcome,
      input.routedAt,
      ctx,
    );
    this.usage.observed++;
    this.count(input.outcome, outcome);
    this.healthChanged(change);
    await this.scheduleAlarm(this.soonest(router.nextProbeAt()));
    return { ok: true };
  }

  private finish(
    leaseId: string,
    input: CompleteInput,
    ctx: RouteContext,
    held?: HeldLease,
  ): string | undefined {
    const lease = this.leases.take(leaseId);
    const router = this.router;
    if (router === undefined) return undefined;
    if (lease === undefined) return this.endForeign(leaseId, input, ctx, held);
    this.leaseEnds.ended(ctx.now);
    const verdict = this.verdicts.get(leaseId);
    if (verdict !== undefined) {
      this.verdicts.delete(leaseId);
      // The first attempt got a 500 (or a 404); this retry elsewhere succeeded: that answer was the backend's, not
      // the request's. (If the retry failed too, the request is the likely cause: nobody is blamed.)
      if (input.ok)
        this.healthChanged(
          router.observe(
            verdict.backendId,
            { blocks: [], promptTokens: 0 },
            { ok: false, backendFault: true },
            verdict.routedAt,
            ctx,
          ),
        );
    }
    const outcome = this.outcomeOf(lease.backendId, input, ctx);
    this.noteSuccess(lease.backendId, input, ctx.now);
    const reopened = lease.ticket.figures === undefined;
    if (reopened) this.foreign.markEnded(leaseId);
    // A reopened lease's blocks were never recorded here: only its health verdict applies.
    this.healthChanged(router.complete(lease.ticket.pool, reopened ? verdictOnly(outcome) : outcome, ctx));
    this.count(input, outcome);
    this.stats_?.ended(lease.ticket.pool.arm, lease.ticket.figures, input);
    return lease.backendId;
  }

  /**
   * The end of a lease this instance does not hold, reported with what the Worker holds of it. One
   * an earlier instance granted (that instance was evicted or restarted) still counts, once: its
   * fault reaches its backend's health, its figures the counters, as if that instance had ended it.
   * Anything else (unknown, already ended, a lease of this instance dropped by a fleet change) is
   * skipped, as before.
   */
  private endForeign(
    leaseId: string,
    input: CompleteInput,
    ctx: RouteContext,
    held: HeldLease | undefined,
  ): string | undefined {
    const router = this.router;
    if (router === undefined || held === undefined || held.instance === this.instance) return undefined;
    if (this.foreign.hasEnded(leaseId)) return undefined;
    if (!this.spec!.backends.some((b) => b.id === held.backendId)) return undefined;
    this.foreign.markEnded(leaseId);
    const outcome = this.outcomeOf(held.backendId, input, ctx);
    this.noteSuccess(held.backendId, input, ctx.now);
    const routedAt = this.foreignRoutedAt(held, ctx.now);
    this.healthChanged(
      router.observe(held.backendId, { blocks: [], promptTokens: 0 }, verdictOnly(outcome), routedAt, ctx),
    );
    this.count(input, outcome);
    this.stats_?.ended(armIndex(held.arm), undefined, input);
    return held.backendId;
  }

  /**
   * A request on `backendId` ended with an answer (`ok`: tokens came, even if an error event followed them):
   * that engine was working when the report came (progress()). A 2xx that carried an error object
   * (`backendError`) proves nothing of the kind: a front end still answers so, at once, while its engine is hung,
   * and counted, another client's requests there kept other clients waiting up to LEASE_TTL_SECONDS.
   */
  private noteSuccess(backendId: string, input: CompleteInput, now: number): void {
    if (input.ok && input.backendError !== true) this.noteOutput(backendId, now);
  }

  /** Keeps the freshest evidence of output per backend: a late, older notice never moves it back. */
  private noteOutput(backendId: string, at: number): void {
    const prev = this.lastOutput.get(backendId);
    if (prev === undefined || at > prev) this.lastOutput.set(backendId, at);
  }

  /**
   * Isolates relaying answer bytes from these backends (src/worker/router/relay-notices.ts): evidence that each
   * is producing output, mid-stream, before any of its requests ends (progress()). Sent alone when no route
   * call carried them (RouteInput.relaying). Evidence only: no routing input, no health verdict.
   */
  async relaying(items: readonly RelayNotice[]): Promise<RelayingResult> {
    return { ok: true, kept: this.hearRelaying(items, Date.now()) };
  }

  /**
   * At most CARRIED_COMPLETES_MAX of `items` (the Worker sends one per backend of the cell); only backends of
   * the pool, with a finite non-negative age (converted to our clock: never later than the truth, the transit
   * only makes it older) and, for a first-token latency, a finite non-negative one.
   */
  private hearRelaying(items: readonly RelayNotice[], now: number): number {
    const spec = this.spec;
    if (spec === undefined || !Array.isArray(items)) return 0;
    let kept = 0;
    const n = Math.min(items.length, CARRIED_COMPLETES_MAX);
    for (let i = 0; i < n; i++) {
      const { id, ageMs } = items[i]!;
      if (!Number.isFinite(ageMs) || ageMs < 0 || !spec.backends.some((b) => b.id === id)) continue;
      this.noteOutput(id, now - ageMs);
      kept++;
    }
    return kept;
  }

  /**
   * How long ago each backend was last seen producing output, as every isolate reported it (a request
   * finished with an answer, or answer bytes relayed: relaying()): read-only, for a Worker whose streamed
   * request waits past its first-event deadline and that relayed nothing from that backend itself lately
   * (src/worker/inference/upstream.ts firstBytes). An isolate sees only its own streams; this object hears
   * every isolate's lease ends and relay notices, so a busy backend is told from a hung one whichever isolate
   * waits, even when none of its requests ends within the window (long answers).
   */
  async progress(): Promise<ProgressResult> {
    const now = Date.now();
    const backends = [...this.lastOutput].map(([id, at]) => ({ id, ageMs: Math.max(0, now - at) }));
    return { ok: true, backends };
  }

  /** The routing core's outcome of a report; a 429 also throttles its backend for its retry-after. */
  private outcomeOf(backendId: string, input: CompleteInput, ctx: RouteContext): RouteOutcome {
    const until = throttledUntil(input, ctx.now);
    if (until !== undefined) this.router!.throttle(backendId, until);
    return toRouteOutcome(input);
  }

  private count(input: CompleteInput, outcome: RouteOutcome): void {
    if (input.failure === "unused") return;
    this.countersChanged();
    // As the arms count (pool-stats.ts): an attempt whose retry was granted is not a failure the client
    // saw; it is in `retried` (counted when the retry was routed), and the retry's own end is counted.
    if (input.ok && input.backendError !== true) this.usage.completed++;
    else if (input.retried !== true) this.usage.failed++;
    // From the outcome the router got, not the report: what the index was charged (a batch's, which the
    // router is not told, as the report has it: toRouteOutcome).
    const output = input.batch === true && input.ok ? input.outputTokens : outcome.outputTokens;
    if (output !== undefined) this.usage.outputTokens += output;
    if (input.cachedTokens !== undefined) {
      this.usage.withUsage++;
      this.usage.cachedTokens += input.cachedTokens;
      this.usage.promptTokens += input.promptTokens ?? 0;
    }
  }

  /** Persists health when a backend was ejected or restored (never per request). */
  private healthChanged(change: HealthChange): void {
    if (change === null) return;
    if (change === "ejected") this.usage.ejections++;
    else this.usage.restorations++;
    this.countersChanged();
    this.store.saveHealth(this.spec!, this.router!.healthRows());
  }

  /**
   * A snapshot for /healthz and tests. `pool` (the Worker's current spec of this pool or cell, as a route call
   * carries it) is taken first, as a route call takes it: without it a cell no request had reached since a
   * BACKENDS change showed the old fleet's backends and health to the operator reading /healthz. Absent (a
   * test, or a Worker of the previous version during a rollout): what this object holds, as before.
   */
  async stats(pool?: AdminInput): Promise<StatsResult> {
    if (pool !== undefined) this.adopt(pool);
    if (this.router === undefined || this.spec === undefined || this.version === undefined) {
      return { ok: false, code: "no_fleet", message: "no request has reached this pool yet" };
    }
    const now = Date.now();
    const router = this.router.stats(now).arms[0]!;
    const backends: BackendStatus[] = router.backends.map((b) => ({
      id: b.id,
      healthy: b.healthy,
      inflight: b.inflight,
      consecutiveFailures: b.faults,
      ...(b.nextProbeAt !== undefined ? { nextProbeAt: b.nextProbeAt } : {}),
      ...(b.relapses !== undefined ? { relapses: b.relapses } : {}),
      ...(b.probation !== undefined ? { probation: b.probation } : {}),
      ...(b.throttledUntil !== undefined ? { throttledUntil: b.throttledUntil } : {}),
    }));
    return {
      ok: true,
      instanceStartedAt: this.startedAt,
      countingSince: this.countingSince,
      fleetVersion: this.version,
      policy: this.spec.policy,
      leases: this.leases.size,
      firstTokens: this.firstTokens,
      backends,
      usage: { ...this.usage },
      router,
      ...(this.spec.engineScrapeMs > 0 ? { engineScrape: this.scraper.status() } : {}),
      ...(this.spec.backendCheckSeconds > 0 ? { backendCheck: this.checker.status() } : {}),
    };
  }

  /**
   * The pool's mergeable figures (README "Is it paying off?"): backends, counters, arms, shadow. `pool`: the
   * Worker's current spec, taken first (as stats() takes it), so /admin/stats, /admin/backends and /metrics show
   * the fleet in force, not the one this object last saw.
   */
  async snapshot(pool?: AdminInput): Promise<SnapshotResult> {
    if (pool !== undefined) this.adopt(pool);
    if (this.router === undefined || this.version === undefined || this.stats_ === undefined)
      return { ok: false, code: "no_fleet", message: "no request has reached this pool yet" };
    return {
      ok: true,
      snapshot: poolSnapshot(
        this.version,
        this.router,
        this.stats_,
        this.usage,
        Date.now(),
        this.countingSince,
        (id) => this.checker.result(id),
      ),
    };
  }

  /**
   * Holds a backend out of new decisions (it finishes its streams) or puts it
   * back; persisted. Draining the last backend in rotation is refused.
   */
  async drain({ backendId, drained, mayEmpty, ...pool }: DrainInput): Promise<AdminResult> {
    const router = this.adopt(pool);
    const was = router.drainedIds().includes(backendId);
    const done = router.drain(backendId, drained, mayEmpty === true);
    if (done === "unknown_backend")
      return { ok: false, code: done, message: `backend ${backendId} is not in the pool` };
    if (done === "last_backend")
      // Every other backend is drained (that is the only way to be the last): name them, so the operator
      // knows which to undrain rather than guessing from /admin/backends.
      return {
        ok: false,
        code: done,
        message:
          "draining it would leave the pool no backend in rotation: undrain one of " +
          `${router.drainedIds().join(", ")} first (POST /admin/backends/{id}/undrain)`,
      };
    this.store.saveDrained(router.drainedIds());
    return { ok: true, drained: router.drainedIds(), changed: was !== drained };
  }

  /**
   * Takes or releases the pool's drain lock (DrainLockInput): the Worker takes it in a pool's first cell around
   * a drain, so drains in different cells are decided one after the other. Memory only: it guards seconds.
   */
  async drainLock({ holder, ttlMs, release }: DrainLockInput): Promise<DrainLockResult> {
    if (release === true) {
      this.drainGate.release(holder);
      return { ok: true };
    }
    return this.drainGate.take(holder, Date.now(), ttlMs);
  }

  /** Forgets what every backend is believed to cache (every arm's and the shadow's index). */
  async resetAffinity(pool: AdminInput): Promise<AdminResult> {
    const router = this.adopt(pool);
    router.resetAffinity();
    return { ok: true, drained: router.drainedIds() };
  }

  /** Takes the Worker's spec when it is newer than ours (an admin call may come before any request). */
  private adopt(pool: AdminInput): PoolRouter {
    if (pool.fleetVersion !== this.version || this.router === undefined)
      this.applySpec(pool.fleetVersion, pool.spec, true);
    return this.router!;
  }

  /**
   * Expires overdue leases, probes ejected backends that are due, scrapes the
   * backends' /metrics and checks their /v1/models when a round is due,
   * re-arms for the next deadline.
   */
  override async alarm(): Promise<void> {
    this.alarmAt = undefined;
    const ctx = this.context();
    for (const l of this.leases.expire(ctx.now)) {
      this.verdicts.delete(l.id);
      this.leaseEnds.ended(ctx.now);
      this.router?.complete(l.ticket.pool, { ok: false }, ctx);
      this.usage.expired++;
      this.countersChanged();
    }
    const due = this.router?.dueProbes(ctx.now) ?? [];
    // Our share of what each engine reports: every arm's requests in flight there (the shadow's are not real).
    const scrape = this.scraper.due(ctx.now)
      ? this.scraper.run(ctx.now, (id) => this.router?.inflight(id) ?? 0)
      : undefined;
    // The backend check (report only: its outcome reaches no routing decision).
    const check = this.checker.due(ctx.now) ? this.checker.run(ctx.now) : undefined;
    await Promise.all([...due.map((id) => this.probe(id)), scrape, check]);
    if (this.countersDirty && Date.now() >= this.countersSavedAt + STATS_SAVE_MS) this.saveCounters();
    await this.scheduleAlarm(
      this.soonest(
        this.leases.earliestDeadline(),
        this.router?.nextProbeAt(),
        this.scraper.nextAt(),
        this.checker.nextAt(),
      ),
    );
  }

  /** The earliest of `times` and of when changed counters are due to be saved; undefined: none. */
  private soonest(...times: (number | undefined)[]): number | undefined {
    let at: number | undefined;
    if (this.countersDirty) at = Math.max(this.countersSavedAt + STATS_SAVE_MS, Date.now());
    for (const t of times) if (t !== undefined && (at === undefined || t < at)) at = t;
    return at;
  }

  private countersChanged(): void {
    this.countersDirty = true;
  }

  /** Writes the /admin/stats figures (fleet-store.ts SavedCounters); off the hot path: the alarm calls it. */
  private saveCounters(): void {
    if (this.spec === undefined || this.stats_ === undefined) return;
    this.store.saveCounters({
      optionsKey: routerOptionsKey(this.spec),
      usage: { ...this.usage },
      ...this.stats_.snapshot(),
      since: this.countingSince,
    });
    this.countersDirty = false;
    this.countersSavedAt = Date.now();
  }

  /**
   * Goes on counting from the saved figures (an evicted or restarted object): the pool's counters
   * always, the arms' when they were counted under the same routing options (else they describe
   * other arms, and the arms count from now).
   */
  private restoreCounters(): void {
    const saved = this.store.loadCounters();
    if (saved === undefined || this.spec === undefined || this.stats_ === undefined) return;
    for (const k of Object.keys(this.usage) as (keyof MutableUsage)[]) {
      const v = saved.usage[k];
      if (typeof v === "number" && Number.isFinite(v)) this.usage[k] = v;
    }
    if (saved.optionsKey === routerOptionsKey(this.spec)) {
      this.stats_.restore(saved);
      this.countingSince = saved.since;
      this.countersDirty = false;
    }
  }

  /**
   * A backend as this object's own BACKENDS lists it (the spec never carries keys): undefined unless an entry
   * has its id and still names the same url, so a key is never sent to an address BACKENDS did not pair it
   * with. The Worker and its objects read one env; they differ only while a deploy rolls out.
   */
  private configured(backend: {
    readonly id: string;
    readonly url: string;
  }): { apiKey?: string } | undefined {
    const b = backendsById(this.env.BACKENDS).get(backend.id);
    if (b === undefined || b.url !== backend.url) return undefined;
    return b.apiKey !== undefined ? { apiKey: b.apiKey } : {};
  }

  private async probe(id: string): Promise<void> {
    const backend = this.spec?.backends.find((b) => b.id === id);
    if (backend === undefined) return;
    const known = this.configured(backend);
    // The key requests carry is checked only when this object knows it (health-probe.ts).
    const { healthy } = await probeBackend(backend.url, {
      timeoutMs: PROBE_TIMEOUT_MS,
      ...(known !== undefined ? { ...known, checkCredentials: true } : {}),
    });
    // The backend may have left the pool, or moved, while we waited.
    const now = this.spec?.backends.find((b) => b.id === id);
    if (now === undefined || now.url !== backend.url || this.router === undefined) return;
    const change = this.router.probed(id, healthy, Date.now());
    this.healthChanged(change);
    // A failed probe moves the next one, a good one of a watched backend (watchHeld) may clear its faults:
    // persist the schedule and the rows too.
    if (change === null) this.store.saveHealth(this.spec!, this.router.healthRows());
  }

  /** Sets the alarm to `at` unless one is already due earlier (one alarm, earliest deadline). */
  private async scheduleAlarm(at: number | undefined): Promise<void> {
    if (at === undefined) return;
    if (this.alarmAt !== undefined && this.alarmAt <= at) return;
    this.alarmAt = at;
    await this.ctx.storage.setAlarm(at);
  }
}

/** The part of an outcome that judges health (success, backend fault), without figures for the index. */
function verdictOnly(outcome: RouteOutcome): RouteOutcome {
  return { ok: outcome.ok, ...(outcome.backendFault === true ? { backendFault: true } : {}) };
}

/** The arm index of a label; a label this pool does not have counts in arm A. */
function armIndex(label: ArmLabel): 0 | 1 {
  return label === "b" ? 1 : 0;
}

function retryAfter(r: NonNullable<RouteInput["retryOf"]>): { retryAfterMs?: number } {
  return r.retryAfterMs !== undefined ? { retryAfterMs: r.retryAfterMs } : {};
}

/** Every backend a request's attempts failed on: the one its last attempt failed on (`avoid`) and the earlier ones. */
function avoidedBy(avoid: string | undefined, tried: readonly string[]): string[] {
  return [...(avoid !== undefined ? [avoid] : []), ...tried];
}
