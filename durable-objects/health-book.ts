/**
 * Passive health of a pool's backends. A connect error or a 5xx marks a
 * backend unhealthy at once (routing around a dead GPU box beats waiting for
 * a threshold); it is probed on its /health endpoint after a cooldown that
 * doubles with each failed probe (capped at 32×), and restored on the first
 * healthy probe. Rows persist in SQLite so a restarted RouterDO does not
 * send traffic straight back to a backend it knew was down.
 */
import type { FleetStore, HealthRow } from "./fleet-store";

const MAX_BACKOFF_DOUBLINGS = 5;

export class HealthBook {
  private readonly rows = new Map<string, HealthRow>();

  constructor(
    private readonly store: FleetStore,
    private probeIntervalMs: number,
  ) {
    for (const r of store.loadHealth()) this.rows.set(r.id, r);
  }

  setProbeInterval(ms: number): void {
    this.probeIntervalMs = ms;
  }

  /** Forgets backends that are no longer in the pool (the store prunes its rows on saveSpec). */
  retain(ids: readonly string[]): void {
    for (const id of [...this.rows.keys()]) if (!ids.includes(id)) this.rows.delete(id);
  }

  isHealthy(id: string): boolean {
    return this.rows.get(id)?.healthy ?? true;
  }

  get(id: string): HealthRow {
    return this.rows.get(id) ?? { id, healthy: true, consecutiveFailures: 0, nextProbeAt: null };
  }

  /** Records a failure; returns true when this turned a healthy backend unhealthy. */
  markFailed(id: string, now: number): boolean {
    const prev = this.get(id);
    const failures = prev.consecutiveFailures + 1;
    const backoff = this.probeIntervalMs * 2 ** Math.min(failures - 1, MAX_BACKOFF_DOUBLINGS);
    this.put({ id, healthy: false, consecutiveFailures: failures, nextProbeAt: now + backoff });
    return prev.healthy;
  }

  /** Records a healthy probe or a good response; returns true when this restored the backend. */
  markHealthy(id: string): boolean {
    const prev = this.get(id);
    if (prev.healthy && prev.consecutiveFailures === 0) return false;
    this.put({ id, healthy: true, consecutiveFailures: 0, nextProbeAt: null });
    return !prev.healthy;
  }

  /** Unhealthy backends whose probe is due. */
  due(now: number): string[] {
    const out: string[] = [];
    for (const r of this.rows.values())
      if (!r.healthy && r.nextProbeAt !== null && r.nextProbeAt <= now) out.push(r.id);
    return out;
  }

  nextProbeAt(): number | undefined {
    let min: number | undefined;
    for (const r of this.rows.values())
      if (!r.healthy && r.nextProbeAt !== null && (min === undefined || r.nextProbeAt < min))
        min = r.nextProbeAt;
    return min;
  }

  private put(row: HealthRow): void {
    this.rows.set(row.id, row);
    this.store.saveHealth(row);
  }
}
