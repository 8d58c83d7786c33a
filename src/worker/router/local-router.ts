/**
 * Decisions a Worker isolate makes alone, while its pool's RouterDO is slow,
 * overloaded or unreachable: the data plane never fails for the control
 * plane's sake. The rule is the routing core's own consistent_hash policy —
 * bounded-load consistent hashing on the request's ring key — so every
 * isolate sends a given prefix to the same home without talking to the
 * others, and a hot prefix spills to its stable second home. Its inputs are
 * what an isolate knows: the backends the RouterDO last reported out of
 * rotation, this isolate's own in-flight requests, and its own outcomes
 * (outlier detection runs here too, with the pool's settings).
 */

import {
  cellSlots,
  fullBackends,
  headroomSlots,
  KeyDemand,
  type KeyedRetryBudget,
  keyedPoolBudget,
  type ProbationRow,
  Router,
  type RouteTicket,
  shareVerdict,
} from "../../routing";
import type { RouteContext, RouteDecision, RouteRequest } from "../../routing/types";
import { throttledUntil, toRouteOutcome } from "./outcomes";
import { backendSpecs, routerOptions } from "./pool-settings";
import type { CompleteInput, PoolSpec } from "./router-rpc";

/**
 * Retries a fresh isolate may spend before its own traffic has earned any; shared out by client key as the
 * RouterDO shares its own (keyedPoolBudget): while the RouterDO is out of reach, a key whose every request
 * fails everywhere must not take the retries another key needs to get away from a backend that just failed.
 */
const LOCAL_RETRY_BURST = 3;

/**
 * A probe this isolate started and never heard back from (its waitUntil cut short) is forgotten after this, ms,
 * so the backend is probed again: several times the probe's own bound (health-probe.ts PROBE_TIMEOUT_MS).
 */
export const LOCAL_PROBE_LOST_MS = 10_000;

export class LocalRouter {
  private readonly router: Router;
  readonly budget: KeyedRetryBudget;
  /** Backends held out because the RouterDO said they were ejected. */
  private heldOut = new Set<string>();
  private lastView = "";
  private readonly ids: ReadonlySet<string>;
  private readonly spec: PoolSpec;
  /** Keys that asked for a slot lately (key-share.ts), as this isolate heard them. */
  private readonly demand = new KeyDemand();
  /** This isolate's local decisions in flight per gateway key (a key holding none has no entry). */
  private readonly perKey = new Map<string, number>();
  /** Backends of this isolate's own ejections being probed now, by when the probe started (takeDueProbes). */
  private readonly probing = new Map<string, number>();
  /** The key each local decision in flight serves, released with it (finish). */
  private readonly keyOf = new WeakMap<RouteTicket, string>();

  constructor(spec: PoolSpec) {
    this.spec = spec;
    this.ids = new Set(spec.backends.map((b) => b.id));
    this.router = new Router(backendSpecs(spec), routerOptions(spec, "consistent_hash"));
    this.budget = keyedPoolBudget(spec.retryBudgetPercent / 100, LOCAL_RETRY_BURST);
  }

  /**
   * Adopts the RouterDO's latest view of which backends are out of rotation, and of which are on probation
   * (back while they have relapses: the first fault of a request this isolate sends there holds it out here,
   * HealthTracker's own rule, instead of its `fall`th). A backend back in rotation comes back with its history
   * forgotten here; the probation is what the RouterDO remembered of it.
   */
  syncEjected(ids: readonly string[] | undefined, probation?: readonly ProbationRow[]): void {
    if (this.restoreOwnEjections(ids)) this.lastView = "";
    const view = `${ids === undefined ? "" : ids.join("\u0000")}\u0001${probationView(probation)}`;
    if (view === this.lastView) return;
    this.lastView = view;
    const want = new Set((ids ?? []).filter((id) => this.ids.has(id)));
    for (const id of this.heldOut) if (!want.has(id)) this.router.setHealthy(id, true);
    for (const id of want) if (!this.heldOut.has(id)) this.router.setHealthy(id, false);
    this.heldOut = want;
    this.router.adoptProbation(probation ?? []);
  }

  /**
   * Backends this isolate ejected on its own outcomes whose /health probe is due at `now`, by the RouterDO's
   * schedule and rule (HealthTracker: `probeIntervalMs` after the ejection, doubling per failed probe, back
   * after `rise` good checks): the caller probes each (health-probe.ts) and tells probed(). Each is handed out
   * once until its probe is heard (or LOCAL_PROBE_LOST_MS passed), so concurrent requests probe it once. Those
   * the RouterDO listed out (syncEjected) are never here: they are its to probe, and it says when they are back.
   */
  takeDueProbes(now: number): string[] {
    const out: string[] = [];
    for (const id of this.router.dueProbes(now)) {
      if (this.heldOut.has(id)) continue;
      const started = this.probing.get(id);
      if (started !== undefined && now - started < LOCAL_PROBE_LOST_MS) continue;
      this.probing.set(id, now);
      out.push(id);
    }
    return out;
  }

  /** The result of a probe takeDueProbes handed out: the same HealthTracker rule as the RouterDO's probes. */
  probed(id: string, ok: boolean, now: number): void {
    this.probing.delete(id);
    if (!this.heldOut.has(id)) this.router.probed(id, ok, now);
  }

  /**
   * Takes back the backends this isolate's own decisions ejected (outlier detection runs here too) that the
   * RouterDO, answering again, has in rotation: their faults were seen while it was out of reach, and the
   * observe() that told it of each was lost with it, or it has since judged them back. The pool's owner of
   * health has the last word: this isolate's own probes (takeDueProbes) may not have brought one back yet,
   * and its back-off doubles per failed probe. Whether any came back.
   */
  private restoreOwnEjections(ids: readonly string[] | undefined): boolean {
    const listed = new Set(ids ?? []);
    let any = false;
    for (const id of this.router.ejectedIds()) {
      if (this.heldOut.has(id) || listed.has(id)) continue;
      this.router.setHealthy(id, true);
      any = true;
    }
    return any;
  }

  /**
   * The backends this isolate's own local decisions have filled to their bound on requests in flight
   * (undefined when no backend is bounded). Its own count is a lower bound of the fleet's (other isolates,
   * the RouterDO's leases), so a backend full here is full: shedding on it never refuses a request the
   * fleet had room for, and keeps at least this isolate from piling requests without end.
   */
  fullBackends(): Set<string> | undefined {
    const { backends, maxInflightPerBackend: bound } = this.spec;
    return fullBackends(backends, bound, (id) => this.router.inflight(id));
  }

  /** Whether a usable backend is not in `full` (Router.hasRoom). */
  hasRoom(full: ReadonlySet<string>, now: number): boolean {
    return this.router.hasRoom(full, now);
  }

  /**
   * Whether a backend outside `ids` can serve, as far as this isolate knows (the RouterDO's last list of those
   * ejected or drained, its own outcomes): Router.usableBesides, the RouterDO's own judgement.
   */
  usableBesides(ids: readonly string[]): boolean {
    return this.router.usableBesides(ids);
  }

  /**
   * A first attempt of `key` asked for a slot at `now` while the bound is on: it contends for the slots a while,
   * shed or not, as the RouterDO counts it (key-share.ts KeyDemand). Nothing without a key or with the share off.
   */
  asked(key: string | undefined, now: number): void {
    if (key !== undefined && this.spec.keyShareHeadroomPercent > 0) this.demand.asked(key, now);
  }

  /**
   * Whether `key` is over its fair share of the pool's slots while other keys contend for them, by the
   * RouterDO's own rule (key-share.ts shareVerdict; RouterDO.overShare): its held count and share when so, else
   * undefined (its ask counted first: asked). Every count here is this isolate's alone, a lower bound of the fleet's (held, in flight, contending keys), so
   * this sheds no more than the RouterDO would: a key over its share here is over it in the fleet. Off (undefined)
   * with KEY_SHARE_HEADROOM_PERCENT 0, without a key, when no backend is bounded or a usable one is unbounded.
   */
  overShare(key: string | undefined, now: number): { held: number; share: number } | undefined {
    const { backends, maxInflightPerBackend, keyShareHeadroomPercent } = this.spec;
    if (key === undefined || keyShareHeadroomPercent <= 0) return undefined;
    const out = new Set([...this.router.ejectedIds(), ...this.router.drainedIds()]);
    const cell = cellSlots(
      backends,
      maxInflightPerBackend,
      (id) => !out.has(id),
      (id) => this.router.inflight(id),
    );
    if (cell === undefined) return undefined;
    const held = this.perKey.get(key) ?? 0;
    const verdict = shareVerdict({
      slots: cell.slots,
      inflight: cell.inflight,
      held,
      contenders: this.demand.contenders(key, now, this.perKey.keys()),
      headroom: headroomSlots(cell.slots, keyShareHeadroomPercent),
    });
    return verdict.admit ? undefined : { held, share: verdict.share };
  }

  /** A local decision; `key` (the client's gateway key) counts it toward that key's slots until it ends. */
  decide(
    req: RouteRequest,
    ctx: RouteContext,
    avoid?: string | readonly string[],
    full?: ReadonlySet<string>,
    key?: string,
  ): { decision: RouteDecision; ticket: RouteTicket } {
    const pick = this.router.route(req, ctx, avoid, full);
    if (key !== undefined) {
      this.keyOf.set(pick.ticket, key);
      this.perKey.set(key, (this.perKey.get(key) ?? 0) + 1);
    }
    return pick;
  }

  /** Ends a local decision with what the Worker saw (a 429 also throttles the backend here). */
  finish(ticket: RouteTicket, input: CompleteInput, ctx: RouteContext): void {
    const key = this.keyOf.get(ticket);
    if (key !== undefined) {
      this.keyOf.delete(ticket);
      const n = (this.perKey.get(key) ?? 0) - 1;
      if (n > 0) this.perKey.set(key, n);
      else this.perKey.delete(key);
    }
    const until = throttledUntil(input, ctx.now);
    if (until !== undefined) this.router.throttle(ticket.backendId, until);
    this.router.complete(ticket, toRouteOutcome(input), ctx);
  }

  /** A local decision's streamed answer sent its first token at `now` (Router.firstToken; ignored once ended). */
  firstToken(ticket: RouteTicket, now: number): void {
    this.router.firstToken(ticket, { now, random: Math.random });
  }

  inflight(id: string): number {
    return this.router.inflight(id);
  }
}

/** A probation list as one string: the same list twice in a row changes nothing (each route answer carries it). */
function probationView(rows: readonly ProbationRow[] | undefined): string {
  return rows === undefined
    ? ""
    : rows.map((r) => `${r.id}\u0000${r.backAt}\u0000${r.probation}`).join("\u0001");
}

const locals = new Map<string, LocalRouter>();

/** The isolate's local router of a pool version (one per model; a new version replaces the old). */
export function localRouterFor(model: string, version: string, spec: PoolSpec): LocalRouter {
  const key = `${model}\u0000${version}`;
  let r = locals.get(key);
  if (r === undefined) {
    for (const k of locals.keys()) if (k.startsWith(`${model}\u0000`)) locals.delete(k);
    r = new LocalRouter(spec);
    locals.set(key, r);
  }
  return r;
}
