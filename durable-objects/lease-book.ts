/**
 * In-flight leases of one RouterDO: which routed request holds which
 * backend, until when. A lease that never completes (the Worker crashed, the
 * completion RPC was lost) expires at its deadline so the bounded-load
 * accounting cannot leak in-flight slots forever. Each lease may carry the
 * gateway key it serves: the book counts the slots each key holds, and since
 * every way a lease ends (completed, failed, retried, expired, dropped with
 * its backend) goes through take or expire, a key's count is released with it
 * (src/routing/key-share.ts reads the counts).
 */
export interface Lease<T> {
  readonly id: string;
  readonly backendId: string;
  readonly ticket: T;
  readonly deadline: number;
  /** The gateway key it serves (RouteInput.clientKey); absent: counted under no key. */
  readonly key?: string;
}

export class LeaseBook<T> {
  private readonly leases = new Map<string, Lease<T>>();
  /** Leases held per key; a key holding none has no entry. */
  private readonly perKey = new Map<string, number>();

  get size(): number {
    return this.leases.size;
  }

  add(lease: Lease<T>): void {
    const old = this.leases.get(lease.id);
    if (old !== undefined) this.remove(old);
    this.leases.set(lease.id, lease);
    if (lease.key !== undefined) this.perKey.set(lease.key, (this.perKey.get(lease.key) ?? 0) + 1);
  }

  /** Leases `key` holds. */
  heldBy(key: string): number {
    return this.perKey.get(key) ?? 0;
  }

  /** The keys holding at least one lease. */
  holders(): IterableIterator<string> {
    return this.perKey.keys();
  }

  private remove(l: Lease<T>): void {
    this.leases.delete(l.id);
    if (l.key === undefined) return;
    const n = (this.perKey.get(l.key) ?? 0) - 1;
    if (n > 0) this.perKey.set(l.key, n);
    else this.perKey.delete(l.key);
  }

  get(id: string): Lease<T> | undefined {
    return this.leases.get(id);
  }

  /** Removes and returns the lease; undefined if unknown or already ended (idempotent completion). */
  take(id: string): Lease<T> | undefined {
    const l = this.leases.get(id);
    if (l !== undefined) this.remove(l);
    return l;
  }

  /** Removes and returns every lease whose deadline has passed. */
  expire(now: number): Lease<T>[] {
    const out: Lease<T>[] = [];
    for (const l of this.leases.values()) if (l.deadline <= now) out.push(l);
    for (const l of out) this.remove(l);
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
