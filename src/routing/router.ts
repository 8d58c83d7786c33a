/**
 * The Router: the one stateful routing object. The RouterDO holds one per
 * model pool; the simulator holds one per experiment arm. It owns the fleet
 * (backends, health, in-flight counts), the affinity index, and a policy.
 *
 * route() → pick (policy) → commit: count in flight, touch the chosen
 * backend's index, tell the policy. complete() → release, correct the index
 * from what the backend reported, tell the policy.
 *
 * Health has one owner, this Router: outcomes (complete, observe) and
 * probe results (probed) feed its HealthTracker, which ejects and restores
 * backends; a 429's retry-after throttles a backend for a while (throttle).
 * Which backends a decision may use follows from both and from an
 * operator's drain (availability.ts: it fails open). Only an empty pool
 * throws NoHealthyBackendError. Several Routers may share one HealthTracker
 * (a pool's A/B arms and its shadow: pool-router.ts); a passive one (the
 * shadow) reads health but never feeds it.
 *
 * Every ticket must be completed exactly once (ok: false on lease expiry):
 * the index treats blocks of uncompleted requests as still being computed.
 */

import type { AffinityReceipt } from "./affinity-index";
import { BackendAffinity } from "./affinity-index";
import { AvailabilityMask, sameMask } from "./availability";
import {
  type HealthChange,
  type HealthRow,
  type HealthSettings,
  HealthTracker,
  type ProbationRow,
} from "./backend-health";
import { FleetState } from "./fleet-state";
import { pastWindowEntries, tailEntries } from "./kv-footprint";
import { boundedPrompt, largestKv, promptCut, routedCount } from "./prompt-bound";
import { type RouterOptions, resolveRouterOptions, validateBackends } from "./router-options";
import type { BackendStats, RouterStats } from "./router-stats";
import type {
  BackendSpec,
  PolicyPick,
  RouteContext,
  RouteDecision,
  RouteOutcome,
  RouteRequest,
  RoutingPolicy,
} from "./types";

/** Handed out by route(), given back to complete(). In-memory only; never serialised. */
export interface RouteTicket {
  readonly backendId: string;
  readonly routedAt: number;
  readonly decision: RouteDecision;
}

export class NoHealthyBackendError extends Error {
  readonly code = "no_healthy_backend";
  constructor(backends: number) {
    super(`no healthy backend to route to (${backends} configured)`);
    this.name = "NoHealthyBackendError";
  }
}

interface Slot {
  spec: BackendSpec;
  index: number;
  removed: boolean;
  routed: number;
  /** A 429 asked for nothing until then (epoch ms; 0: never). */
  throttledUntil: number;
  /** Held out by an operator: finishes what it has, takes nothing new. */
  drained: boolean;
  readonly affinity: BackendAffinity;
}

interface TicketState {
  readonly slot: Slot;
  readonly req: RouteRequest;
  readonly receipt: AffinityReceipt;
}

export class Router {
  readonly policy: RoutingPolicy;
  readonly blockTokens: number;
  readonly balanceFactor: number;
  readonly indexStride: number;
  private readonly fleet: FleetState;
  private readonly health: HealthTracker;
  private slots: Slot[] = [];
  private byId = new Map<string, Slot>();
  private readonly tickets = new WeakMap<RouteTicket, TicketState>();
  private corrected = 0;
  private forgotten = 0;
  private readonly availability = new AvailabilityMask();
  private readonly passive: boolean;
  private healthSeen = -1;
  /** The largest KV capacity of the fleet: what a request's prompt is counted at most (prompt-bound.ts). */
  private largestKv = 0;

  constructor(backends: readonly BackendSpec[], options: RouterOptions) {
    const o = resolveRouterOptions(options);
    this.policy = o.policy;
    this.blockTokens = o.blockTokens;
    this.balanceFactor = o.balanceFactor;
    this.indexStride = o.indexStride;
    this.fleet = new FleetState(this.blockTokens, this.balanceFactor, this.indexStride, o.engineSignals);
    this.health = options.healthTracker ?? new HealthTracker(o.health);
    this.passive = options.passive === true;
    this.setBackends(backends);
  }

  /** Replaces the fleet. Backends whose id stays keep their index, health and in-flight count. */
  setBackends(backends: readonly BackendSpec[]): void {
    validateBackends(backends);
    const f = this.fleet;
    const next: Slot[] = [];
    const byId = new Map<string, Slot>();
    const inflight: number[] = [];
    const affinity: BackendAffinity[] = [];
    let total = 0;
    backends.forEach((spec, i) => {
      const capacity = Math.max(1, Math.floor(spec.kvCacheTokens / (this.blockTokens * this.indexStride)));
      const old = this.byId.get(spec.id);
      const slot: Slot = old ?? {
        spec,
        index: i,
        removed: false,
        routed: 0,
        throttledUntil: 0,
        drained: false,
        affinity: new BackendAffinity(capacity),
      };
      if (old !== undefined) {
        inflight.push(f.inflight[old.index]!);
        if (slot.affinity.blocks.capacity !== capacity) slot.affinity.blocks.setCapacity(capacity);
      } else {
        inflight.push(0);
      }
      slot.spec = { id: spec.id, weight: spec.weight, kvCacheTokens: spec.kvCacheTokens };
      slot.index = i;
      total += inflight[i]!;
      affinity.push(slot.affinity);
      next.push(slot);
      byId.set(spec.id, slot);
    });
    for (const s of this.slots) if (!byId.has(s.spec.id)) s.removed = true;
    this.slots = next;
    this.byId = byId;
    this.health.setBackends(next.map((s) => s.spec.id));
    // A new array each time: policies detect fleet changes by identity.
    f.backends = next.map((s) => s.spec);
    this.largestKv = largestKv(f.backends);
    f.healthy = [];
    f.inflight = inflight;
    f.affinity = affinity;
    f.totalInflight = total;
    this.availability.invalidate();
    this.refreshAvailability(Number.NEGATIVE_INFINITY);
    f.forgetMatches();
    this.policy.onBackendsChanged?.(f.backends);
  }

  setHealthSettings(settings: HealthSettings): void {
    this.health.setSettings(settings);
  }

  /**
   * Puts a backend back in rotation (true) or holds it out (false) by hand,
   * bypassing fall/rise: tests and the simulator's fault scenarios. A backend
   * held out by hand is never probed and no outcome brings it back
   * (ejectedAt = +∞: every request was "routed before" it).
   */
  setHealthy(id: string, healthy: boolean): void {
    this.slotOf(id, "setHealthy");
    const r = this.health.get(id);
    if (healthy) this.health.reset(id);
    else
      this.health.load([
        {
          ...r,
          ejected: true,
          goodChecks: 0,
          failedProbes: 0,
          ejectedAt: Number.POSITIVE_INFINITY,
          nextProbeAt: null,
        },
      ]);
    this.availability.invalidate();
  }

  /** A backend answered 429: send it nothing until `until` (epoch ms) while others can serve. */
  throttle(id: string, until: number): void {
    const slot = this.byId.get(id);
    if (slot === undefined || until <= slot.throttledUntil) return;
    slot.throttledUntil = until;
    this.availability.invalidate();
  }

  /** Holds a backend out of new decisions (true) or puts it back (false); false for an unknown id. */
  setDrained(id: string, drained: boolean): boolean {
    const slot = this.byId.get(id);
    if (slot === undefined) return false;
    if (slot.drained !== drained) {
      slot.drained = drained;
      this.availability.invalidate();
    }
    return true;
  }

  /** Ids of the backends an operator drained. */
  drainedIds(): string[] {
    return this.slots.filter((s) => s.drained).map((s) => s.spec.id);
  }

  /**
   * Whether a backend outside `ids` (and the drained) can serve, as HealthTracker.anyUsable judges one: where a
   * busy retry can move on to. The RouterDO (through PoolRouter) and the Worker's local fail-open path both ask
   * it, and answer the retry with the busy backend's own 429 when none can (nowhere_else).
   */
  usableBesides(ids: readonly string[]): boolean {
    return this.health.anyUsable(new Set([...this.drainedIds(), ...ids]));
  }

  /** Ids of the backends a 429's (or a 503's) retry-after still keeps out at `now` (throttle). */
  throttledIds(now: number): string[] {
    return this.slots.filter((s) => s.throttledUntil > now).map((s) => s.spec.id);
  }

  /** Forgets what every backend is believed to cache (the affinity index), keeping load and health. */
  resetAffinity(): void {
    for (const s of this.slots) s.affinity.reset();
    this.fleet.forgetMatches();
  }

  /** The result of a /health probe of an ejected backend (or one the cap holds in, watched: HealthTracker.watchHeld). */
  probed(id: string, ok: boolean, now: number): HealthChange {
    if (!this.byId.has(id)) return null;
    return this.changed(this.health.probed(id, ok, now));
  }

  /** Ejected (or watched) backends whose /health probe is due. */
  dueProbes(now: number): string[] {
    return this.health.due(now);
  }

  nextProbeAt(): number | undefined {
    return this.health.nextProbeAt();
  }

  /** Health rows that differ from "in rotation, no faults" (what the RouterDO persists). */
  healthRows(): HealthRow[] {
    return this.health.rows();
  }

  /** Restores persisted health rows (rows of backends not in the pool are ignored). */
  loadHealth(rows: readonly HealthRow[]): void {
    this.health.load(rows);
    this.availability.invalidate();
  }

  /** Forgets a backend's health history: same id, different server (its address changed). */
  resetHealth(id: string): void {
    this.health.reset(id);
    this.availability.invalidate();
  }

  /** The backends on probation at `now` (HealthTracker.onProbation): the RouterDO tells the Worker's fail-open path. */
  onProbation(now: number): ProbationRow[] {
    return this.health.onProbation(now);
  }

  /** Takes the RouterDO's word on which backends are on probation (HealthTracker.adoptProbation). */
  adoptProbation(rows: readonly ProbationRow[]): void {
    this.health.adoptProbation(rows);
  }

  /**
   * Chooses a backend. `avoid` (a retry's failed backend, or the backends a request's earlier attempts failed on)
   * is left out of this one decision unless no other backend is available; so are the backends in
   * `full` (at their bound on requests in flight: inflight-bound.ts), unless
   * that leaves none, when the decision is taken as without them.
   */
  route(
    request: RouteRequest,
    ctx: RouteContext,
    avoid?: string | readonly string[],
    full?: ReadonlySet<string>,
  ): { decision: RouteDecision; ticket: RouteTicket } {
    const f = this.fleet;
    if (f.backends.length === 0) throw new NoHealthyBackendError(0);
    if (!(request.promptTokens >= 0))
      throw new RangeError(`promptTokens: must be >= 0, got ${request.promptTokens}`);
    // The one count the policy, its ledger and the index see from here on, ticket included (prompt-bound.ts).
    const req = boundedPrompt(request, this.largestKv, this.blockTokens);
    this.refreshAvailability(ctx.now);
    f.forgetMatches();
    const skip: number[] = [];
    for (const id of avoid === undefined ? [] : typeof avoid === "string" ? [avoid] : avoid) {
      const j = this.byId.get(id)?.index;
      if (j !== undefined && !skip.includes(j)) skip.push(j);
    }
    const out = this.leftOut(skip, full);
    let pick: PolicyPick;
    if (out.length > 0) {
      for (const j of out) f.healthy[j] = false;
      f.recomputeHealthyWeight();
      try {
        pick = this.policy.pick(req, f, ctx);
      } finally {
        for (const j of out) f.healthy[j] = true;
        f.recomputeHealthyWeight();
      }
    } else {
      pick = this.policy.pick(req, f, ctx);
    }
    const i = pick.index;
    if (!Number.isInteger(i) || i < 0 || i >= f.backends.length)
      throw new Error(`policy ${this.policy.name} picked backend index ${i} of ${f.backends.length}`);
    if (!f.healthy[i])
      throw new Error(`policy ${this.policy.name} picked unhealthy backend ${f.backends[i]!.id}`);
    const slot = this.slots[i]!;
    // The longest prefix any usable backend holds: what the best decision could have reused.
    const all = req.blocks.length > 0 ? f.matchedBlocks(req.blocks) : undefined;
    let available = 0;
    if (all !== undefined)
      for (let j = 0; j < all.length; j++) if (f.healthy[j] && all[j]! > available) available = all[j]!;
    const matched = f.matchedOn(i, req.blocks);
    slot.routed++;
    const ticket = this.open(slot, req, matched, ctx.now, promptCut(request, this.largestKv), {
      backendId: slot.spec.id,
      reason: pick.reason,
      expectedCachedTokens: Math.min(req.promptTokens, matched * this.blockTokens),
      availableCachedTokens: Math.min(req.promptTokens, Math.max(available, matched) * this.blockTokens),
      ...(req !== request ? { routed: routedCount(req) } : {}),
    });
    this.policy.onRouted?.(req, i, f, ctx);
    return { decision: ticket.decision, ticket };
  }

  /**
   * The usable backends one decision leaves out: `skip` and those in `full` when another usable backend is
   * left, else `skip` alone when another is left, else none.
   */
  private leftOut(skip: readonly number[], full: ReadonlySet<string> | undefined): number[] {
    if (skip.length === 0 && (full === undefined || full.size === 0)) return [];
    const f = this.fleet;
    const out: number[] = [];
    let kept = 0;
    for (let j = 0; j < f.backends.length; j++) {
      if (!f.healthy[j]) continue;
      if (skip.includes(j) || full?.has(f.backends[j]!.id) === true) out.push(j);
      else kept++;
    }
    if (kept > 0) return out;
    const skipped = skip.filter((j) => f.healthy[j]);
    return skipped.length > 0 && f.healthy.some((h, j) => h && !skip.includes(j)) ? skipped : [];
  }

  /**
   * Whether a decision at `now` has a usable backend (as route() would choose among: availability.ts) that is
   * not in `full`: false when every one is at its bound on requests in flight (the request is shed).
   */
  hasRoom(full: ReadonlySet<string>, now: number): boolean {
    this.refreshAvailability(now);
    const f = this.fleet;
    for (let j = 0; j < f.backends.length; j++) if (f.healthy[j] && !full.has(f.backends[j]!.id)) return true;
    return false;
  }

  /**
   * Idempotent per ticket. A ticket whose backend was removed meanwhile changes nothing.
   * Returns the health change the outcome caused (ejected, restored) or null.
   */
  complete(ticket: RouteTicket, outcome: RouteOutcome, ctx: RouteContext): HealthChange {
    const state = this.tickets.get(ticket);
    if (state === undefined) return null;
    this.tickets.delete(ticket);
    const { slot, req, receipt } = state;
    if (slot.removed) return null;
    const f = this.fleet;
    const i = slot.index;
    f.inflight[i] = Math.max(0, f.inflight[i]! - 1);
    f.totalInflight = Math.max(0, f.totalInflight - 1);
    this.settle(slot, receipt, req, outcome);
    this.policy.onCompleted?.(req, i, outcome, ctx);
    return this.judge(slot.spec.id, outcome, ticket.routedAt, ctx.now);
  }

  /**
   * The first token of a request routed with `ticket` streamed back at ctx.now (the Worker's relay sees the
   * stream's first bytes): the policy is told, once the request is still open. Nothing else changes.
   */
  firstToken(ticket: RouteTicket, ctx: RouteContext): void {
    const state = this.tickets.get(ticket);
    if (state === undefined || state.slot.removed) return;
    this.policy.onFirstToken?.(state.req, state.slot.index, ctx);
  }

  /**
   * Counts in flight, on `backendId`, a request routed there at `routedAt` by
   * an earlier holder of this state (a RouterDO instance that was evicted: the
   * Worker re-announces the leases it still holds open). Nothing is learnt:
   * its blocks and its cost were the old instance's; only the load bound
   * needs to see it. complete() releases it like any ticket (the outcome then
   * judges health; with no blocks recorded, the index learns nothing).
   * undefined for a backend not in the fleet.
   */
  restore(backendId: string, routedAt: number): RouteTicket | undefined {
    const slot = this.byId.get(backendId);
    if (slot === undefined) return undefined;
    // Nobody decided here: this decision is never reported (the lease's route result went out long ago).
    return this.open(slot, { blocks: [], promptTokens: 0 }, 0, routedAt, false, {
      backendId,
      reason: "fallback",
      expectedCachedTokens: 0,
      availableCachedTokens: 0,
    });
  }

  /**
   * A request this Router did not route (the Worker decided alone while the
   * RouterDO was unreachable) went to `backendId`: learn its blocks and its
   * outcome as if it had been routed there at `routedAt`, with nothing in flight.
   */
  observe(
    backendId: string,
    request: RouteRequest,
    outcome: RouteOutcome,
    routedAt: number,
    ctx: RouteContext,
  ): HealthChange {
    const slot = this.byId.get(backendId);
    if (slot === undefined) return null;
    const req = boundedPrompt(request, this.largestKv, this.blockTokens);
    const f = this.fleet;
    f.forgetMatches();
    const matched = f.matchedOn(slot.index, req.blocks);
    const receipt = this.record(slot, req, matched, promptCut(request, this.largestKv));
    this.settle(slot, receipt, req, outcome);
    return this.judge(backendId, outcome, routedAt, ctx.now);
  }

  /** Requests in flight on a backend; 0 for an unknown id. */
  inflight(id: string): number {
    const slot = this.byId.get(id);
    return slot === undefined ? 0 : this.fleet.inflight[slot.index]!;
  }

  get totalInflight(): number {
    return this.fleet.totalInflight;
  }

  /** Ids of the backends outlier detection has ejected. */
  ejectedIds(): string[] {
    return this.slots.filter((s) => this.health.isEjected(s.spec.id)).map((s) => s.spec.id);
  }

  stats(now?: number): RouterStats {
    const f = this.fleet;
    let indexBytes = 0;
    let indexBlocks = 0;
    const stride = this.indexStride;
    const backends = this.slots.map((s, i): BackendStats => {
      // Keyed entries only: anonymous ones (kv-footprint.ts) stand for cache no request can match.
      const keyed = (s.affinity.blocks.size - s.affinity.blocks.anonymous) * stride;
      indexBytes += s.affinity.blocks.bytes();
      indexBlocks += keyed;
      const h = this.health.get(s.spec.id);
      const rate = this.policy.prefillTokensPerSec?.(i);
      const perInflight = this.policy.learnedInflightMs?.(i);
      const estimateError = this.policy.promptEstimateError?.(i);
      return {
        id: s.spec.id,
        healthy: !h.ejected,
        drained: s.drained,
        faults: h.faults,
        ...(s.throttledUntil > (now ?? 0) ? { throttledUntil: s.throttledUntil } : {}),
        ...(h.nextProbeAt !== null ? { nextProbeAt: h.nextProbeAt } : {}),
        ...relapsesOf(now === undefined ? h.relapses : this.health.relapsesAt(s.spec.id, now)),
        ...probationOf(now === undefined ? h.probation : this.health.probationAt(s.spec.id, now)),
        weight: s.spec.weight,
        inflight: f.inflight[i]!,
        indexBlocks: keyed,
        indexCapacityBlocks: s.affinity.blocks.capacity * stride,
        routed: s.routed,
        ...(rate !== undefined ? { prefillTokensPerSec: rate } : {}),
        ...(perInflight !== undefined ? { learnedInflightMs: perInflight } : {}),
        ...(estimateError !== undefined ? { promptEstimateError: estimateError } : {}),
      };
    });
    const overrun = this.policy.prefillEndOverrunMs?.();
    return {
      policy: this.policy.name,
      blockTokens: this.blockTokens,
      balanceFactor: this.balanceFactor,
      indexStride: this.indexStride,
      totalInflight: f.totalInflight,
      backends,
      indexBytes,
      indexBlocks,
      correctedBlocks: this.corrected,
      forgottenBlocks: this.forgotten,
      ...(overrun !== undefined ? { prefillEndOverrunMs: overrun } : {}),
    };
  }

  private slotOf(id: string, what: string): Slot {
    const slot = this.byId.get(id);
    if (slot === undefined) throw new Error(`${what}: unknown backend id "${id}"`);
    return slot;
  }

  /**
   * What route() and restore() both do once the backend is known: count the request in flight
   * there, record its blocks on the backend (`matched` of them already held), and keep its ticket
   * for complete(). The decision gets the backend's in-flight count before this request. `cut`: the
   * prompt bound cut its count (record).
   */
  private open(
    slot: Slot,
    req: RouteRequest,
    matched: number,
    routedAt: number,
    cut: boolean,
    decided: Omit<RouteDecision, "inflightAtDecision">,
  ): RouteTicket {
    const f = this.fleet;
    const inflightAtDecision = f.inflight[slot.index]!;
    f.inflight[slot.index] = inflightAtDecision + 1;
    f.totalInflight++;
    const receipt = this.record(slot, req, matched, cut);
    const ticket: RouteTicket = {
      backendId: slot.spec.id,
      routedAt,
      decision: { ...decided, inflightAtDecision },
    };
    this.tickets.set(ticket, { slot, req, receipt });
    return ticket;
  }

  /**
   * Touches the request's keys on its backend's index, with the cache its prompt fills past them.
   *
   * `cut`: its count passed the largest KV and the prompt bound cut it (prompt-bound.ts). Below 2·L
   * the count cannot tell a prompt that fills an engine from text the estimate overcounts (~1.5 MB of
   * spaces is counted 393k and is a few thousand tokens), and the entries its prompt would fill past
   * the keys would evict, at once and for good, every entry of the backend no running request pins:
   * one client's odd request cost every other client its affinity there (red-team.md, est-bound-2,
   * left alone 1). So an estimate past L is not evicted for when routed: it stays charged as load (the
   * policy's ledger) while it runs, and its entries past the keys wait for the engine's own count at
   * settle. A real prompt that long still evicts them then, as the engine's LRU did.
   */
  private record(slot: Slot, req: RouteRequest, matched: number, cut: boolean): AffinityReceipt {
    const anchors = this.fleet.anchors(req.blocks);
    const entryTokens = this.blockTokens * this.indexStride;
    const unkeyed = pastWindowEntries(req.promptTokens, anchors.length, entryTokens);
    if (cut) return slot.affinity.record(anchors, matched / this.indexStride, 0, unkeyed);
    // Within L, the part of the estimate the Worker cannot vouch for (RouteRequest.unconfirmedTokens: a run
    // of spaces counted 4 characters a token) waits for the engine's count as a cut count does; the rest
    // evicts at route as the engine's prefill does.
    const claimed = unconfirmedOf(req);
    const trusted =
      claimed > 0 ? pastWindowEntries(req.promptTokens - claimed, anchors.length, entryTokens) : unkeyed;
    return slot.affinity.record(anchors, matched / this.indexStride, trusted, unkeyed - trusted);
  }

  private settle(slot: Slot, receipt: AffinityReceipt, req: RouteRequest, outcome: RouteOutcome): void {
    const entryTokens = this.blockTokens * this.indexStride;
    const tail = tailEntries(req.promptTokens, outcome.outputTokens, this.blockTokens, entryTokens);
    // What the engine's count (usage.prompt_tokens; none reported: nothing) fills past the keys, within L.
    const confirmed =
      receipt.unconfirmed > 0 && outcome.promptTokens !== undefined
        ? pastWindowEntries(Math.min(outcome.promptTokens, this.largestKv), receipt.touched, entryTokens)
        : 0;
    const settled = slot.affinity.settle(receipt, outcome, entryTokens, req.promptTokens, tail, confirmed);
    this.corrected += settled.evicted;
    this.forgotten += settled.forgotten;
    if (settled.evicted + settled.forgotten > 0) this.fleet.forgetMatches();
  }

  /** Feeds an outcome to outlier detection: a fault, a success, or (neither) nothing. */
  private judge(id: string, outcome: RouteOutcome, routedAt: number, now: number): HealthChange {
    if (this.passive) return null;
    if (outcome.backendFault === true) return this.changed(this.health.fault(id, routedAt, now));
    if (outcome.ok) return this.changed(this.health.success(id, routedAt));
    return null;
  }

  private changed(change: HealthChange): HealthChange {
    if (change !== null) this.availability.invalidate();
    return change;
  }

  /** Rebuilds FleetView.healthy when health or a throttle changed, or a throttle ran out. */
  private refreshAvailability(now: number): void {
    if (this.health.version !== this.healthSeen) {
      // Another Router sharing the tracker (or this one) changed health since the last mask.
      this.healthSeen = this.health.version;
      this.availability.invalidate();
    }
    if (!this.availability.due(now)) return;
    const f = this.fleet;
    const mask = this.availability.build(
      this.slots.map((s) => this.health.isEjected(s.spec.id)),
      this.slots.map((s) => s.throttledUntil),
      now,
      this.slots.map((s) => s.drained),
    );
    if (!sameMask(mask, f.healthy)) {
      f.healthy = mask;
      f.recomputeHealthyWeight();
    }
  }
}

/** A request's unconfirmed tokens (RouteRequest.unconfirmedTokens) as a count within its prompt: 0 when absent or not a number. */
function unconfirmedOf(req: RouteRequest): number {
  const n = req.unconfirmedTokens;
  if (n === undefined || !(n > 0)) return 0;
  return Math.min(Math.floor(n), req.promptTokens);
}

function relapsesOf(n: number): { relapses?: number } {
  return n > 0 ? { relapses: n } : {};
}

function probationOf(n: number): { probation?: number } {
  return n > 0 ? { probation: n } : {};
}
