/**
 * Outlier detection over a pool's backends: which ones are ejected from
 * routing, and when each ejected one is probed. Pure: time is a parameter.
 *
 * Anchors: Envoy's outlier detection (consecutive failures, a cap on the
 * share of a pool ejected at once) and HAProxy's health checks (`fall`
 * consecutive faults to go down, `rise` consecutive good checks to come back).
 *
 * - `fall` consecutive backend faults eject a backend; any success resets the
 *   count. What counts as a fault is the caller's call (a connect error, a
 *   timeout, a 502/503/504, a cut stream, a 500 the same request did not also
 *   get elsewhere); client aborts and request-caused errors count for nothing.
 * - At most `maxEjectionPercent` of the pool is ejected at once (at least one
 *   backend when the pool has two or more; never a pool's only backend). A
 *   backend past `fall` while the cap is reached stays in rotation until an
 *   ejected one comes back.
 * - An ejected backend is probed `probeIntervalMs` after its ejection, the
 *   delay doubling with each failed probe (capped at 32×), and restored after
 *   `rise` consecutive good checks: good probes, or good outcomes of requests
 *   routed to it AFTER its ejection (fail-open traffic). Outcomes of requests
 *   routed before the ejection say nothing new; letting them restore it made
 *   ejection flap under load.
 * - A backend the cap holds in rotation is probed only when asked (watchHeld:
 *   a pool split in cells whose cell has nothing else, so its requests go to
 *   other cells and no request of its own would tell of a recovery); the same
 *   schedule, and `rise` good probes (or one success) clear its faults.
 * - A relapse (held out again, ejected or watched, within RELAPSE_WINDOW
 *   probe intervals of the good checks that brought it back) waits longer
 *   for its first probe: the interval doubled per relapse in a row, capped
 *   at 32× as failed probes are. A /health that says 200 while requests get
 *   502 passes every probe, so without it such a backend came back after
 *   `rise` intervals and cost `fall` failed requests each time, for ever.
 *   The count is forgotten once the backend stays in rotation that long
 *   (Envoy's outlier detection multiplies the ejection time by the ejections
 *   in a row the same way, and lowers it while the host stays healthy). A
 *   backend that recovers for real waits at most 32 intervals, then `rise`
 *   good checks, as one whose probes kept failing does.
 * - Probation: a backend brought back while it has relapses (within
 *   RELAPSE_WINDOW) is held out again on its first fault, not its `fall`th,
 *   until `rise` good requests routed to it after it came back. Its probes
 *   are what lied, so the requests must give the evidence they gave: the same
 *   count of good checks. Without it each return of a backend whose /health
 *   lies still cost `fall` failed requests (each a moved retry, or the
 *   client's 502 once the budget was spent). One fault counts as `fall`
 *   faults, so the cap on ejections is untouched: a backend it keeps in
 *   rotation is failing (and watched, in a cell), as after `fall` faults. A
 *   backend back for the first time, or one whose relapses were forgotten,
 *   is on no probation: one transient error does not send it out.
 */
import { checkSetting } from "./defaults";

export interface HealthSettings {
  /** Consecutive faults that eject a backend. */
  readonly fall: number;
  /** Consecutive good checks that restore an ejected backend. */
  readonly rise: number;
  /** Largest share of the pool ejected at once, 0..100. */
  readonly maxEjectionPercent: number;
  /** Delay before an ejected backend's first probe, ms; doubles per failed probe. */
  readonly probeIntervalMs: number;
}

/** One backend's health, as persisted by the RouterDO. Default (absent) = in rotation, no faults. */
export interface HealthRow {
  readonly id: string;
  readonly ejected: boolean;
  /** Consecutive faults (in rotation) — the count `fall` is compared with. */
  readonly faults: number;
  /** Consecutive good checks since the ejection — compared with `rise`. */
  readonly goodChecks: number;
  /** Consecutive failed probes since the ejection: the backoff exponent. */
  readonly failedProbes: number;
  /** When it was ejected (epoch ms), null in rotation. */
  readonly ejectedAt: number | null;
  /** When its next probe is due (epoch ms), null in rotation. */
  readonly nextProbeAt: number | null;
  /**
   * Times in a row it was held out again (ejected, or watched: watchHeld) within RELAPSE_WINDOW probe
   * intervals of coming back: the first probe after a hold waits the interval × 2^relapses (capped).
   */
  readonly relapses: number;
  /** When good checks (probes, or requests' outcomes) last brought it back (epoch ms); null: not lately. */
  readonly backAt: number | null;
  /**
   * Good requests it still owes since it came back with relapses (probation): while > 0 (and within
   * RELAPSE_WINDOW of backAt), one fault holds it out again. 0: none owed.
   */
  readonly probation: number;
}

/**
 * A backend on probation as the pool's tracker sees it (probationAt > 0): what another tracker of the same
 * pool needs to apply the same rule (adoptProbation). The Worker's fail-open path learns it from route answers.
 */
export type ProbationRow = Pick<HealthRow, "id" | "relapses" | "probation"> & { readonly backAt: number };

export type HealthChange = "ejected" | "restored" | null;

/** Probe backoff stops doubling here: 2^5 = 32× the interval. */
const MAX_BACKOFF_DOUBLINGS = 5;
/**
 * Probe intervals after coming back within which being held out again is a relapse; in rotation that long, the
 * relapses are forgotten. The longest hold (32 intervals): a backend must serve as long as it was last held out.
 */
export const RELAPSE_WINDOW = 2 ** MAX_BACKOFF_DOUBLINGS;

function inRotation(id: string): HealthRow {
  return {
    id,
    ejected: false,
    faults: 0,
    goodChecks: 0,
    failedProbes: 0,
    ejectedAt: null,
    nextProbeAt: null,
    relapses: 0,
    backAt: null,
    probation: 0,
  };
}

function isDefault(r: HealthRow): boolean {
  return !r.ejected && r.faults === 0 && r.backAt === null;
}

/**
 * The settings if valid: fall, rise and maxEjectionPercent within the bounds
 * of EJECT_AFTER_FAULTS, RESTORE_AFTER_CHECKS and MAX_EJECTION_PERCENT
 * (defaults.ts). The probe interval only has to be positive: the Worker's
 * config bounds it in whole seconds, tests and the simulator probe faster.
 */
export function validateHealthSettings(s: HealthSettings): HealthSettings {
  checkSetting("EJECT_AFTER_FAULTS", s.fall, "fall");
  checkSetting("RESTORE_AFTER_CHECKS", s.rise, "rise");
  checkSetting("MAX_EJECTION_PERCENT", s.maxEjectionPercent, "maxEjectionPercent");
  if (!(s.probeIntervalMs > 0) || !Number.isFinite(s.probeIntervalMs))
    throw new RangeError(`probeIntervalMs: must be a finite number > 0, got ${s.probeIntervalMs}`);
  return s;
}

export class HealthTracker {
  private rowsById = new Map<string, HealthRow>();
  private ids: readonly string[] = [];
  private settings: HealthSettings;
  private changes = 0;

  constructor(settings: HealthSettings) {
    this.settings = validateHealthSettings(settings);
  }

  setSettings(settings: HealthSettings): void {
    this.settings = validateHealthSettings(settings);
  }

  /**
   * Grows whenever a row changes: Routers sharing this tracker (a pool's A/B
   * arms and its shadow) rebuild their availability masks when it moved.
   */
  get version(): number {
    return this.changes;
  }

  /** The pool's backends. Rows of backends that left are forgotten. */
  setBackends(ids: readonly string[]): void {
    this.ids = [...ids];
    const keep = new Set(ids);
    for (const id of [...this.rowsById.keys()]) if (!keep.has(id)) this.rowsById.delete(id);
    this.changes++;
  }

  /** Forgets one backend's history (its address changed: it is a different server now). */
  reset(id: string): void {
    this.rowsById.delete(id);
    this.changes++;
  }

  /** Rows that differ from the default, for persistence. */
  rows(): HealthRow[] {
    return [...this.rowsById.values()];
  }

  /**
   * Restores persisted rows (of backends in the pool; others are ignored). A row saved before relapses were
   * counted has none: no relapse, not lately back; one saved before probation, none.
   */
  load(rows: readonly HealthRow[]): void {
    const known = new Set(this.ids);
    for (const saved of rows) {
      const r: HealthRow = {
        ...saved,
        relapses: saved.relapses ?? 0,
        backAt: saved.backAt ?? null,
        probation: saved.probation ?? 0,
      };
      if (known.has(r.id) && !isDefault(r)) this.rowsById.set(r.id, r);
    }
    this.changes++;
  }

  get(id: string): HealthRow {
    return this.rowsById.get(id) ?? inRotation(id);
  }

  /** Its relapses in a row as of `now` (0 once it has stayed in rotation RELAPSE_WINDOW intervals since coming back). */
  relapsesAt(id: string, now: number): number {
    const r = this.get(id);
    return r.ejected || r.nextProbeAt !== null || this.lately(r, now) ? r.relapses : 0;
  }

  /** Good requests it still owes at `now` before a fault no longer holds it out at once (0: on no probation). */
  probationAt(id: string, now: number): number {
    const r = this.get(id);
    return !r.ejected && r.nextProbeAt === null && this.lately(r, now) ? r.probation : 0;
  }

  /** The backends on probation at `now` (probationAt > 0), for another tracker of the pool (adoptProbation). */
  onProbation(now: number): ProbationRow[] {
    const out: ProbationRow[] = [];
    for (const r of this.rowsById.values()) {
      const owed = this.probationAt(r.id, now);
      if (owed > 0) out.push({ id: r.id, relapses: r.relapses, backAt: r.backAt!, probation: owed });
    }
    return out;
  }

  /**
   * Takes the pool's own tracker's word on probation (its onProbation, complete: a backend not in `rows` owes
   * nothing), so that this one, which sees no probes (the Worker's fail-open router), holds a backend out on
   * its first fault as that one would. Its own state wins where it is stricter: a backend it holds out or
   * watches is left alone, and of one return (same backAt) it owes the fewer requests of the two (each counts
   * the good requests it saw). Faults are kept.
   */
  adoptProbation(rows: readonly ProbationRow[]): void {
    const word = new Map(rows.map((w) => [w.id, w]));
    for (const id of this.ids) {
      const r = this.get(id);
      if (r.ejected || r.nextProbeAt !== null) continue;
      const w = word.get(id);
      if (w === undefined) {
        if (r.probation > 0) this.put({ ...r, probation: 0 });
      } else if (r.backAt !== w.backAt) {
        this.put({ ...r, relapses: w.relapses, backAt: w.backAt, probation: w.probation });
      } else if (w.probation < r.probation) {
        this.put({ ...r, probation: w.probation });
      }
    }
  }

  /** Came back by good checks less than RELAPSE_WINDOW probe intervals before `now`. */
  private lately(r: HealthRow, now: number): boolean {
    return r.backAt !== null && now - r.backAt < RELAPSE_WINDOW * this.settings.probeIntervalMs;
  }

  /**
   * Being held out at `now` (ejected, or watched): its relapses in a row, and when its first probe is due: one
   * interval after a hold that is no relapse, doubled per relapse in a row (capped as failed probes are).
   */
  private hold(
    r: HealthRow,
    now: number,
  ): { relapses: number; nextProbeAt: number; backAt: null; probation: 0 } {
    const relapses = this.lately(r, now) ? r.relapses + 1 : 0;
    const wait = this.settings.probeIntervalMs * 2 ** Math.min(relapses, MAX_BACKOFF_DOUBLINGS);
    return { relapses, nextProbeAt: now + wait, backAt: null, probation: 0 };
  }

  /** Back by good checks at `at`: on probation (`rise` good requests owed, less `served`) if it has relapses. */
  private back(r: HealthRow, at: number, served: number): { backAt: number; probation: number } {
    return { backAt: at, probation: r.relapses > 0 ? Math.max(0, this.settings.rise - served) : 0 };
  }

  /**
   * Ejected, or past `fall` consecutive faults and kept in rotation only by the cap on ejections (maxEjected):
   * health would have it out of rotation. In one pool the cap is right (a request has nowhere else to go); a
   * pool split in cells can send it to another cell (PoolRouter.anyUsable).
   */
  failing(id: string): boolean {
    const r = this.get(id);
    return r.ejected || r.faults >= this.settings.fall;
  }

  /**
   * Whether a backend outside `held` (drained) can serve: one not failing, or, when every one is failing but
   * none is probed (none ejected, none watched: a pool of one backend, MAX_EJECTION_PERCENT 0), any: no probe
   * would tell when one recovers, only a request's success can. With one probed, its probes do.
   */
  anyUsable(held: ReadonlySet<string>): boolean {
    let probed = false;
    let any = false;
    for (const id of this.ids) {
      if (held.has(id)) continue;
      if (!this.failing(id)) return true;
      any = true;
      probed ||= this.get(id).nextProbeAt !== null || this.isEjected(id);
    }
    return any && !probed;
  }

  /**
   * When every backend outside `held` (drained) is failing, schedules a probe (at `now` + the interval) of each
   * the cap holds in rotation that has none: a pool split in cells then sends this cell's requests to other
   * cells (anyUsable turns false), and the probe is how it hears of a recovery. True when one was scheduled
   * (the caller persists the rows). A pool that is not split never calls it: the cap's backends take its
   * requests, and their successes clear them.
   */
  watchHeld(held: ReadonlySet<string>, now: number): boolean {
    const watch: HealthRow[] = [];
    for (const id of this.ids) {
      if (held.has(id)) continue;
      if (!this.failing(id)) return false;
      const r = this.get(id);
      if (!r.ejected && r.nextProbeAt === null) watch.push(r);
    }
    for (const r of watch) this.put({ ...r, goodChecks: 0, failedProbes: 0, ...this.hold(r, now) });
    return watch.length > 0;
  }

  /**
   * Whether a retry has a backend outside `held` (drained, throttled, and every one its attempts met) that is
   * not suspect: in rotation with no fault since its last success. Stricter than anyUsable: when every backend
   * of a cell shares a fault (one host, one switch), the others start faulting together, and a retry sent to one
   * whose last answer was a fault most likely meets the same; a pool split in cells can send it to another
   * cell instead (the RouterDO answers a movable retry no_usable). One fault is enough to be suspect: `fall`
   * faults are what ejection waits for, and the first requests after a cell breaks are the ones that pay it.
   */
  fitForRetry(held: ReadonlySet<string>): boolean {
    for (const id of this.ids) {
      if (held.has(id)) continue;
      const r = this.get(id);
      if (!r.ejected && r.faults === 0) return true;
    }
    return false;
  }

  isEjected(id: string): boolean {
    return this.rowsById.get(id)?.ejected === true;
  }

  get ejectedCount(): number {
    let n = 0;
    for (const r of this.rowsById.values()) if (r.ejected) n++;
    return n;
  }

  /** How many backends may be ejected at once in a pool of this size. */
  maxEjected(): number {
    const n = this.ids.length;
    if (n <= 1) return 0;
    return Math.max(1, Math.floor((n * this.settings.maxEjectionPercent) / 100));
  }

  /** A backend fault on a request routed at `routedAt`. */
  fault(id: string, routedAt: number, now: number): HealthChange {
    const r = this.get(id);
    if (r.ejected) {
      // Fail-open traffic sent after the ejection failed too: the good-check streak starts over.
      if (routedAt >= r.ejectedAt! && r.goodChecks > 0) this.put({ ...r, goodChecks: 0 });
      return null;
    }
    // On probation, a request routed to it since it came back failed: as good as `fall` faults (the cap holds).
    const probation = r.backAt !== null && routedAt >= r.backAt && this.probationAt(id, now) > 0;
    const faults = probation ? Math.max(r.faults + 1, this.settings.fall) : r.faults + 1;
    if (faults >= this.settings.fall && this.ejectedCount < this.maxEjected()) {
      this.put({
        ...r,
        ejected: true,
        faults,
        goodChecks: 0,
        failedProbes: 0,
        ejectedAt: now,
        ...this.hold(r, now),
      });
      return "ejected";
    }
    // A watched backend's good probes start over (as an ejected one's do).
    this.put({ ...r, faults, goodChecks: 0 });
    return null;
  }

  /** A good outcome of a request routed at `routedAt`. */
  success(id: string, routedAt: number): HealthChange {
    const r = this.rowsById.get(id);
    if (r === undefined) return null;
    if (!r.ejected) {
      // A watched backend is cleared by one success: back, as good probes would have it (a relapse counts).
      const watched = r.nextProbeAt !== null;
      // In rotation RELAPSE_WINDOW intervals since it came back: its relapses are forgotten.
      // A good request routed since it came back pays one of its probation's (the watched one's success, too).
      const since = watched
        ? this.back(r, routedAt, 1)
        : this.lately(r, routedAt)
          ? {
              probation:
                r.backAt !== null && routedAt >= r.backAt ? Math.max(0, r.probation - 1) : r.probation,
            }
          : { relapses: 0, backAt: null, probation: 0 };
      this.put({ ...r, faults: 0, goodChecks: 0, failedProbes: 0, nextProbeAt: null, ...since });
      return null;
    }
    if (routedAt < r.ejectedAt!) return null;
    return this.goodCheck(r, routedAt, false);
  }

  /** The result of a /health probe (of an ejected backend, or a watched one: watchHeld). */
  probed(id: string, ok: boolean, now: number): HealthChange {
    const r = this.rowsById.get(id);
    if (r === undefined || r.nextProbeAt === null) return null;
    if (ok) return this.goodCheck(r, now, true);
    const failedProbes = r.failedProbes + 1;
    // A relapse's hold (hold()) goes on doubling from where it started.
    const doublings = Math.min(failedProbes + r.relapses, MAX_BACKOFF_DOUBLINGS);
    const backoff = this.settings.probeIntervalMs * 2 ** doublings;
    this.put({ ...r, goodChecks: 0, failedProbes, nextProbeAt: now + backoff });
    return null;
  }

  /** Backends whose probe is due (ejected, or watched: watchHeld). */
  due(now: number): string[] {
    const out: string[] = [];
    for (const r of this.rowsById.values())
      if (r.nextProbeAt !== null && r.nextProbeAt <= now) out.push(r.id);
    return out;
  }

  nextProbeAt(): number | undefined {
    let min: number | undefined;
    for (const r of this.rowsById.values())
      if (r.nextProbeAt !== null && (min === undefined || r.nextProbeAt < min)) min = r.nextProbeAt;
    return min;
  }

  /** A good probe (`probe`) or request outcome at `now`. */
  private goodCheck(r: HealthRow, now: number, probe: boolean): HealthChange {
    const goodChecks = r.goodChecks + 1;
    if (goodChecks >= this.settings.rise) {
      // Back in rotation, its faults cleared; the row stays (backAt) so that a relapse soon after is told.
      this.put({ ...inRotation(r.id), relapses: r.relapses, ...this.back(r, now, 0) });
      // A watched backend was never out of rotation: its faults are cleared, nothing is restored.
      return r.ejected ? "restored" : null;
    }
    // Not yet: check again one interval later (a good probe undoes the backoff).
    const nextProbeAt = probe ? now + this.settings.probeIntervalMs : r.nextProbeAt;
    this.put({ ...r, goodChecks, failedProbes: 0, nextProbeAt });
    return null;
  }

  private put(r: HealthRow): void {
    this.changes++;
    if (isDefault(r)) this.rowsById.delete(r.id);
    else this.rowsById.set(r.id, r);
  }
}
