/**
 * RouterDO: one per model pool, a thin durable shell around the routing core
 * (src/routing). It owns the in-flight leases, the fleet spec and health
 * (SQLite), and one alarm set to the earliest deadline (lease expiry or a
 * health probe). It decides; it never sees a token of the response.
 */
import { DurableObject } from "cloudflare:workers";
import { Router } from "../src/routing";
import type { BackendSpec, RouteContext, RouteOutcome, RouteRequest } from "../src/routing/types";
import { FleetStore } from "./fleet-store";
import { HealthBook } from "./health-book";
import { LeaseBook } from "./lease-book";
import type {
  BackendStatus,
  CompleteInput,
  CompleteResult,
  FailureKind,
  PoolSpec,
  RouteInput,
  RouteResult,
  StatsResult,
} from "./rpc";

type Ticket = ReturnType<Router["route"]>["ticket"];

/** A backend's /health must answer within this, or the probe counts as a failure. */
const PROBE_TIMEOUT_MS = 2000;

function toBackendSpecs(spec: PoolSpec): BackendSpec[] {
  return spec.backends.map((b) => ({ id: b.id, weight: b.weight, kvCacheTokens: b.kvCacheTokens }));
}

/** The router options a spec implies; a change in any of them needs a fresh Router. */
function routerOptionsKey(spec: PoolSpec): string {
  return `${spec.policy}|${spec.blockTokens}|${spec.balanceFactor}`;
}

/** Failures that say the backend itself is in trouble (not the client, not the request). */
function isBackendFault(failure: FailureKind | undefined, status: number | undefined): boolean {
  if (failure === "connect_error" || failure === "server_error") return true;
  return status !== undefined && status >= 500;
}

export class RouterDO extends DurableObject<Env> {
  private readonly store: FleetStore;
  private readonly leases = new LeaseBook<Ticket>();
  private health!: HealthBook;
  private router: Router | undefined;
  private spec: PoolSpec | undefined;
  private version: string | undefined;
  private readonly usage = {
    completed: 0,
    failed: 0,
    expired: 0,
    withUsage: 0,
    promptTokens: 0,
    cachedTokens: 0,
  };
  /** The alarm we believe is scheduled (undefined: none), so the hot path rarely touches storage. */
  private alarmAt: number | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new FleetStore(ctx.storage.sql);
    void ctx.blockConcurrencyWhile(async () => {
      this.store.migrate();
      const saved = this.store.loadSpec();
      this.health = new HealthBook(this.store, (saved?.spec.healthProbeSeconds ?? 10) * 1000);
      if (saved !== undefined) this.applySpec(saved.version, saved.spec, false);
      this.alarmAt = (await ctx.storage.getAlarm()) ?? undefined;
    });
  }

  private context(): RouteContext {
    return { now: Date.now(), random: Math.random };
  }

  private applySpec(version: string, spec: PoolSpec, persist: boolean): void {
    const specs = toBackendSpecs(spec);
    if (
      this.router === undefined ||
      this.spec === undefined ||
      routerOptionsKey(this.spec) !== routerOptionsKey(spec)
    ) {
      // Policy or block size changed: the old affinity index means nothing under the new keys.
      this.router = new Router(specs, {
        policy: spec.policy,
        blockTokens: spec.blockTokens,
        balanceFactor: spec.balanceFactor,
      });
      this.leases.expire(Number.POSITIVE_INFINITY);
    } else {
      this.router.setBackends(specs);
      // Leases on removed backends can no longer be released into the new fleet: drop them.
      const ids = new Set(specs.map((b) => b.id));
      for (const l of [...this.leases.all()]) if (!ids.has(l.backendId)) this.leases.take(l.id);
    }
    this.health.setProbeInterval(spec.healthProbeSeconds * 1000);
    this.health.retain(specs.map((b) => b.id));
    for (const b of specs) if (!this.health.isHealthy(b.id)) this.router.setHealthy(b.id, false);
    this.spec = spec;
    this.version = version;
    if (persist) this.store.saveSpec(version, spec);
  }

  /** Chooses a backend for one request and opens a lease on it. */
  async route(input: RouteInput): Promise<RouteResult> {
    if (input.spec !== undefined && input.fleetVersion !== this.version) {
      this.applySpec(input.fleetVersion, input.spec, true);
    }
    if (this.router === undefined || this.spec === undefined || input.fleetVersion !== this.version) {
      return { ok: false, code: "fleet_stale", message: `RouterDO holds fleet ${this.version ?? "none"}` };
    }
    const ctx = this.context();
    if (input.retryOf !== undefined) {
      this.finish(input.retryOf.leaseId, { ok: false, failure: input.retryOf.failure }, ctx);
    }
    const healthyIds = this.spec.backends.filter((b) => this.health.isHealthy(b.id));
    if (healthyIds.length === 0) {
      await this.scheduleAlarm(this.health.nextProbeAt());
      return { ok: false, code: "no_healthy_backend", message: "every backend of this pool is unhealthy" };
    }
    const req: RouteRequest = {
      blocks: input.blocks,
      promptTokens: input.promptTokens,
      ...(input.outputTokens !== undefined ? { outputTokens: input.outputTokens } : {}),
    };
    const { decision, ticket } = this.router.route(req, ctx);
    const leaseId = crypto.randomUUID();
    const deadline = ctx.now + this.spec.leaseTtlSeconds * 1000;
    this.leases.add({ id: leaseId, backendId: decision.backendId, ticket, deadline });
    await this.scheduleAlarm(deadline);
    return {
      ok: true,
      backendId: decision.backendId,
      leaseId,
      reason: decision.reason,
      expectedCachedTokens: decision.expectedCachedTokens,
      inflightAtDecision: decision.inflightAtDecision,
      policy: this.spec.policy,
    };
  }

  /** Ends a lease: releases the in-flight slot and feeds what happened back to the router. */
  async complete(leaseId: string, input: CompleteInput): Promise<CompleteResult> {
    const ctx = this.context();
    const backendId = this.finish(leaseId, input, ctx);
    if (backendId === undefined) {
      return { ok: false, code: "unknown_lease", message: `lease ${leaseId} is unknown or already ended` };
    }
    await this.scheduleAlarm(this.health.nextProbeAt());
    return { ok: true, backendId };
  }

  private finish(leaseId: string, input: CompleteInput, ctx: RouteContext): string | undefined {
    const lease = this.leases.take(leaseId);
    if (lease === undefined || this.router === undefined) return undefined;
    const outcome: RouteOutcome = {
      ok: input.ok,
      ...(input.promptTokens !== undefined ? { promptTokens: input.promptTokens } : {}),
      ...(input.cachedTokens !== undefined ? { cachedTokens: input.cachedTokens } : {}),
      ...(input.ttftMs !== undefined ? { ttftMs: input.ttftMs } : {}),
    };
    this.router.complete(lease.ticket, outcome, ctx);
    if (input.ok) this.usage.completed++;
    else this.usage.failed++;
    if (input.cachedTokens !== undefined) {
      this.usage.withUsage++;
      this.usage.cachedTokens += input.cachedTokens;
      this.usage.promptTokens += input.promptTokens ?? 0;
    }
    if (isBackendFault(input.failure, input.status)) {
      if (this.health.markFailed(lease.backendId, ctx.now)) this.router.setHealthy(lease.backendId, false);
    } else if (input.ok) {
      if (this.health.markHealthy(lease.backendId)) this.router.setHealthy(lease.backendId, true);
    }
    return lease.backendId;
  }

  /** A snapshot for /healthz and tests. */
  async stats(): Promise<StatsResult> {
    if (this.router === undefined || this.spec === undefined || this.version === undefined) {
      return { ok: false, code: "no_fleet", message: "no request has reached this pool yet" };
    }
    const router = this.router;
    const backends: BackendStatus[] = this.spec.backends.map((b) => {
      const h = this.health.get(b.id);
      return {
        id: b.id,
        healthy: h.healthy,
        inflight: router.inflight(b.id),
        consecutiveFailures: h.consecutiveFailures,
        ...(h.nextProbeAt !== null ? { nextProbeAt: h.nextProbeAt } : {}),
      };
    });
    return {
      ok: true,
      fleetVersion: this.version,
      policy: this.spec.policy,
      leases: this.leases.size,
      backends,
      usage: { ...this.usage },
      router: router.stats(),
    };
  }

  /** Expires overdue leases, probes unhealthy backends that are due, re-arms for the next deadline. */
  override async alarm(): Promise<void> {
    this.alarmAt = undefined;
    const ctx = this.context();
    for (const l of this.leases.expire(ctx.now)) {
      this.router?.complete(l.ticket, { ok: false }, ctx);
      this.usage.expired++;
    }
    const due = this.health.due(ctx.now);
    await Promise.all(due.map((id) => this.probe(id)));
    const next = [this.leases.earliestDeadline(), this.health.nextProbeAt()].filter(
      (t): t is number => t !== undefined,
    );
    if (next.length > 0) await this.scheduleAlarm(Math.min(...next));
  }

  private async probe(id: string): Promise<void> {
    const backend = this.spec?.backends.find((b) => b.id === id);
    if (backend === undefined) return;
    let healthy = false;
    try {
      const res = await fetch(`${backend.url}/health`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
      healthy = res.ok;
      await res.body?.cancel();
    } catch {
      healthy = false;
    }
    // The backend may have left the pool while we waited.
    if (this.spec?.backends.some((b) => b.id === id) !== true) return;
    if (healthy) {
      if (this.health.markHealthy(id)) this.router?.setHealthy(id, true);
    } else {
      this.health.markFailed(id, Date.now());
    }
  }

  /** Sets the alarm to `at` unless one is already due earlier (one alarm, earliest deadline). */
  private async scheduleAlarm(at: number | undefined): Promise<void> {
    if (at === undefined) return;
    if (this.alarmAt !== undefined && this.alarmAt <= at) return;
    this.alarmAt = at;
    await this.ctx.storage.setAlarm(at);
  }
}
