/**
 * Which backends a decision may use (FleetView.healthy): those neither
 * ejected nor throttled; if that leaves none, those not ejected (every
 * backend throttled: they still serve, the client's 429 would be no
 * better); if every backend is ejected, all of them (fail open: a suspect
 * fleet serves, an empty answer never does).
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

  /** The mask from each backend's ejection and throttle (epoch ms; 0 = none), at `now`. */
  build(ejected: readonly boolean[], throttledUntil: readonly number[], now: number): boolean[] {
    const n = ejected.length;
    let expiry = Number.POSITIVE_INFINITY;
    let anyOpen = false;
    let anyInRotation = false;
    const open = new Array<boolean>(n);
    for (let i = 0; i < n; i++) {
      const throttled = throttledUntil[i]! > now;
      if (throttled && !ejected[i]) expiry = Math.min(expiry, throttledUntil[i]!);
      open[i] = !ejected[i] && !throttled;
      anyOpen ||= open[i]!;
      anyInRotation ||= !ejected[i];
    }
    this.stale = false;
    this.nextThrottleExpiry = expiry;
    if (anyOpen) return open;
    if (anyInRotation) return ejected.map((e) => !e);
    return new Array<boolean>(n).fill(true);
  }
}

/** Two masks are the same. */
export function sameMask(a: readonly boolean[], b: readonly boolean[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
