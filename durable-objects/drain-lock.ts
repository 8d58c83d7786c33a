/**
 * A lock with a deadline, held in one object's memory: a pool split in RouterDO cells takes it in its first
 * cell's object around each drain (src/worker/admin/pool-admin.ts drainIn), so that drains in different cells
 * are decided one after the other. Each drain reads the other cells' state before it lands; two at once each
 * read the other before it landed and could both empty their cells, leaving the pool no backend in rotation.
 *
 * An object runs one call at a time between awaits and this has none, so a take is atomic. The deadline frees a
 * lock whose holder never released it (its Worker died mid-drain); a holder slower than the deadline (or an
 * object evicted while a drain holds it) is the window that remains. Pure: time is a parameter.
 */
export class DeadlineLock {
  private holder: string | undefined;
  private until = 0;

  /** Takes (or renews) the lock for `holder` until `now + ttlMs`; else how long the current holder keeps it, ms. */
  take(holder: string, now: number, ttlMs: number): { ok: true } | { ok: false; heldForMs: number } {
    if (this.holder !== undefined && this.holder !== holder && this.until > now)
      return { ok: false, heldForMs: this.until - now };
    this.holder = holder;
    this.until = now + ttlMs;
    return { ok: true };
  }

  /** Frees the lock if `holder` holds it (a late release of an expired lock frees nothing of the next holder's). */
  release(holder: string): void {
    if (this.holder === holder) this.holder = undefined;
  }
}
