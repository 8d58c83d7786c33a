/**
 * The opt-in bound on requests in flight per backend (MAX_INFLIGHT_PER_BACKEND,
 * a backend's own `maxInflight` overriding it): Envoy's circuit-breaker
 * `max_requests`, nginx's upstream `max_conns`. A backend at its bound takes
 * no new request while another usable one has room (Router.route's `full`);
 * when none has room the request is shed (the RouterDO answers at_capacity,
 * the client gets a 429 with a retry-after) instead of queueing without end
 * in some engine. Off (0) by default: then nothing here is consulted and the
 * routing is exactly what it was.
 *
 * Pure: counts come in as arguments, time as a parameter.
 */

/** A backend as the bound sees it. */
export interface BoundedBackend {
  readonly id: string;
  /** Its own bound, overriding the pool's; 0 = none for this backend. */
  readonly maxInflight?: number;
}

/** The bound that applies to `b`: its own, else the pool's; 0 = unbounded. */
export function boundOf(b: BoundedBackend, poolBound: number): number {
  return b.maxInflight ?? poolBound;
}

/** Whether any backend of the pool is bounded at all (else the bound costs nothing and changes nothing). */
export function anyBound(backends: readonly BoundedBackend[], poolBound: number): boolean {
  return backends.some((b) => boundOf(b, poolBound) > 0);
}

/**
 * The ids of the backends whose requests in flight (every arm's) have reached their bound; undefined when no
 * backend of the pool is bounded (the default: then nothing is counted, and routing is as without a bound).
 */
export function fullBackends(
  backends: readonly BoundedBackend[],
  poolBound: number,
  inflight: (id: string) => number,
): Set<string> | undefined {
  if (!anyBound(backends, poolBound)) return undefined;
  const full = new Set<string>();
  for (const b of backends) {
    const bound = boundOf(b, poolBound);
    if (bound > 0 && inflight(b.id) >= bound) full.add(b.id);
  }
  return full;
}

/** Lease ends remembered for the retry-after estimate. */
export const LEASE_ENDS_KEPT = 16;

/**
 * When a shed client should come back: the mean time between the pool's
 * recent lease ends (one ends, a slot frees), measured up to `now`, so a
 * fleet that stops finishing requests is seen as slower and slower, not as
 * fast as it last was. Before any lease has ended: how long the oldest lease
 * in flight has been running (nothing has finished in that long). At least
 * `minMs`, at most `maxMs`.
 */
export class LeaseEndClock {
  private readonly ends: number[] = [];
  private next = 0;
  /** The latest time a shed client has been told to come back (nextSlotMs): the end of the virtual queue. */
  private promisedUntil = 0;

  /** A lease ended at `now` (completed, failed or expired: its slot is free either way). */
  ended(now: number): void {
    if (this.ends.length < LEASE_ENDS_KEPT) this.ends.push(now);
    else {
      this.ends[this.next] = now;
      this.next = (this.next + 1) % LEASE_ENDS_KEPT;
    }
  }

  /** Retry-after, ms; `oldestRoutedAt`: when the oldest lease in flight was granted (undefined: none). */
  retryAfterMs(now: number, oldestRoutedAt: number | undefined, minMs: number, maxMs: number): number {
    let est: number;
    if (this.ends.length === 0) est = oldestRoutedAt === undefined ? minMs : now - oldestRoutedAt;
    else {
      let first = Number.POSITIVE_INFINITY;
      for (const t of this.ends) first = Math.min(first, t);
      est = (now - first) / this.ends.length;
    }
    return Math.min(maxMs, Math.max(minMs, est));
  }

  /**
   * A shed client's retry-after, one slot behind the clients already told to come back: a burst shed at once
   * is spread over the slots the fleet frees (one per mean gap between lease ends), not sent back together
   * to be shed again. Clients asked after the promised time has passed start a fresh queue; before any end
   * is known there is no gap to space them by, and each is told the plain estimate. Within
   * `minMs`..`maxMs`; a client past `maxMs` is told `maxMs` and does not push the queue further.
   */
  nextSlotMs(now: number, oldestRoutedAt: number | undefined, minMs: number, maxMs: number): number {
    const gap = this.retryAfterMs(now, oldestRoutedAt, minMs, maxMs);
    // Before any lease has ended the estimate is the time to the first end, not a gap between ends: stacked,
    // it told successive clients of a spike's first seconds 12, 23, 34… s. They share that first estimate.
    if (this.ends.length === 0) return gap;
    const slot = Math.max(now, this.promisedUntil) + gap;
    const wait = Math.min(maxMs, Math.max(minMs, slot - now));
    this.promisedUntil = Math.min(slot, now + maxMs);
    return wait;
  }
}
