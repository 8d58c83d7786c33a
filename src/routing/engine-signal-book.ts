/**
 * The latest engine reading of each backend (EngineSignals), as a periodic
 * scrape delivers them: the RouterDO records what each backend's /metrics
 * said (durable-objects/engine-scrape.ts), the simulator what its engine
 * model said at each scrape tick. The Router's FleetView reads them by
 * backend index (`read`). A failed scrape records nothing: the backend's
 * previous reading ages until `expire` forgets it, and routing goes on
 * without it. Pure: time is a parameter.
 */
import type { EngineSignals } from "./types";

export class EngineSignalBook {
  private ids: readonly string[] = [];
  private readonly byId = new Map<string, EngineSignals>();

  /** @param maxAgeMs readings older than this are forgotten by expire(). */
  constructor(private maxAgeMs: number) {
    this.setMaxAge(maxAgeMs);
  }

  setMaxAge(ms: number): void {
    if (!(ms > 0)) throw new RangeError(`maxAgeMs: must be > 0, got ${ms}`);
    this.maxAgeMs = ms;
  }

  /** The pool's backends in FleetView order; readings of backends that left are dropped. */
  setBackends(ids: readonly string[]): void {
    this.ids = [...ids];
    const keep = new Set(ids);
    for (const id of [...this.byId.keys()]) if (!keep.has(id)) this.byId.delete(id);
  }

  /** A reading of backend `id`; an unknown backend's, or one older than the reading held, is ignored. */
  record(id: string, reading: EngineSignals): void {
    if (!this.ids.includes(id)) return;
    const held = this.byId.get(id);
    if (held === undefined || held.sampledAt <= reading.sampledAt) this.byId.set(id, reading);
  }

  /** Forgets backend `id`'s reading (its address changed: a different server). */
  forget(id: string): void {
    this.byId.delete(id);
  }

  /** Backend i's reading (FleetView.engineSignals), undefined when it has none. */
  readonly read = (i: number): EngineSignals | undefined => {
    const id = this.ids[i];
    return id === undefined ? undefined : this.byId.get(id);
  };

  /** Forgets readings older than maxAgeMs at `now`; returns how many. */
  expire(now: number): number {
    let n = 0;
    for (const [id, r] of this.byId)
      if (now - r.sampledAt > this.maxAgeMs) {
        this.byId.delete(id);
        n++;
      }
    return n;
  }

  /** Backends with a reading. */
  get size(): number {
    return this.byId.size;
  }
}
