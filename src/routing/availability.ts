/**
 * Which backends a decision may use (FleetView.healthy): those neither
 * ejected, throttled nor drained; if that leaves none, those neither ejected
 * nor drained (every backend throttled: they still serve, the client's 429
 * would be no better); if every one of those is ejected, every backend not
 * drained (fail open: a suspect fleet serves, an empty answer never does).
 * A drained backend (an operator's hold: it finishes its streams, takes no
 * new request) is used only when every backend is drained.
 *
 * The mask changes only when health or a throttle changes, or a throttle
 * runs out: between those events decisions reuse it.
 */
export class AvailabilityMask {
  private stale = true;
  /** Earliest end of a throttle the mask excludes (ms): the mask is rebuilt then. */
  private nextThrottleExpiry = Number.POSITIVE_INFINITY;

  /** Health or a throttle changed: rebuild before the next decision. */
  invalidate(): void {
    this.stale = true;
  }

  /** Whether a decision at `now` needs the mask rebuilt. */
  due(now: number): boolean {
    return this.stale || now >= this.nextThrottleExpiry;
  }

  /**
   * The mask from each backend's ejection, throttle (epoch ms; 0 = none) and
   * drain, at `now`.
   */
  build(
    ejected: readonly boolean[],
    throttledUntil: readonly number[],
    now: number,
    drained: readonly boolean[] = [],
  ): boolean[] {
    const n = ejected.length;
    let expiry = Number.POSITIVE_INFINITY;
    let anyOpen = false;
    let anyInRotation = false;
    let anyUndrained = false;
    const open = new Array<boolean>(n);
    for (let i = 0; i < n; i++) {
      const held = drained[i] === true;
      const throttled = throttledUntil[i]! > now;
      if (throttled && !ejected[i] && !held) expiry = Math.min(expiry, throttledUntil[i]!);
      open[i] = !ejected[i] && !throttled && !held;
      anyOpen ||= open[i]!;
      anyInRotation ||= !ejected[i] && !held;
      anyUndrained ||= !held;
    }
    this.stale = false;
    this.nextThrottleExpiry = expiry;
    if (anyOpen) return open;
    if (anyInRotation) return ejected.map((e, i) => !e && drained[i] !== true);
    if (anyUndrained) return ejected.map((_, i) => drained[i] !== true);
    return new Array<boolean>(n).fill(true);
  }
}

/** Two masks are the same. */
export function sameMask(a: readonly boolean[], b: readonly boolean[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
