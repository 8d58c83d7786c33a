/**
 * In-flight leases of one RouterDO: which routed request holds which
 * backend, until when. A lease that never completes (the Worker crashed, the
 * completion RPC was lost) expires at its deadline so the bounded-load
 * accounting cannot leak in-flight slots forever.
 */
export interface Lease<T> {
  readonly id: string;
  readonly backendId: string;
  readonly ticket: T;
  readonly deadline: number;
}

export class LeaseBook<T> {
  private readonly leases = new Map<string, Lease<T>>();

  get size(): number {
    return this.leases.size;
  }

  add(lease: Lease<T>): void {
    this.leases.set(lease.id, lease);
  }

  get(id: string): Lease<T> | undefined {
    return this.leases.get(id);
  }

  /** Removes and returns the lease; undefined if unknown or already ended (idempotent completion). */
  take(id: string): Lease<T> | undefined {
    const l = this.leases.get(id);
    if (l !== undefined) this.leases.delete(id);
    return l;
  }

  /** Removes and returns every lease whose deadline has passed. */
  expire(now: number): Lease<T>[] {
    const out: Lease<T>[] = [];
    for (const l of this.leases.values()) if (l.deadline <= now) out.push(l);
    for (const l of out) this.leases.delete(l.id);
    return out;
  }

  /** Earliest deadline; a full scan, so callers use it off the hot path (alarms). */
  earliestDeadline(): number | undefined {
    let min: number | undefined;
    for (const l of this.leases.values()) if (min === undefined || l.deadline < min) min = l.deadline;
    return min;
  }

  /** Every live lease (used to drop leases of backends that left the pool). */
  all(): IterableIterator<Lease<T>> {
    return this.leases.values();
  }
}
