/**
 * The leases this isolate holds open (their streams run here), per cell, and
 * which instance of each cell's RouterDO last answered it. A RouterDO keeps
 * its leases in memory only: it is evicted after some idle time and
 * restarted by every deploy (Cloudflare, "Lifecycle of a Durable Object"),
 * and the instance that takes over starts with none. Writing every lease to
 * the object's SQLite would hold every route answer until the write is
 * confirmed (the output gate) and bill two row writes per request; instead
 * the Worker, which holds the stream anyway, remembers the lease and, when a
 * route answer comes from another instance than the one that granted it,
 * re-announces it (RouterDO.reopen), so in-flight counts are repaired on
 * the next contact; its end carries the same facts (HeldLease), so a new
 * instance still applies it to health and the counters.
 *
 * Bounded: a lease leaves at its report; one never reported (a request that
 * threw between its decision and its report) is swept once past its TTL.
 * Holds no I/O and no promises (shared by the requests of one isolate).
 */
import type { ArmLabel } from "../stats/pool-snapshot";
import type { HeldLease, ReopenedLease } from "./router-rpc";

export interface OpenLease {
  readonly leaseId: string;
  readonly backendId: string;
  /** The RouterDO instance that granted it. */
  readonly instance: string;
  readonly arm: ArmLabel;
  /** The gateway key its route call carried (RouteInput.clientKey): re-announced with it. */
  readonly key?: string;
  /** When it was granted, by this isolate's clock (epoch ms). */
  readonly grantedAt: number;
  /** Past this (grantedAt + the pool's lease TTL) the RouterDO has expired it: no longer worth holding. */
  readonly expiresAt: number;
}

/** How often, at most, leases past their TTL are swept (ms). */
const SWEEP_EVERY_MS = 60_000;

/** A lease as its end or its re-announcement carries it, `now` by this isolate's clock. */
export function heldOf(lease: OpenLease, now: number): HeldLease {
  return {
    backendId: lease.backendId,
    instance: lease.instance,
    arm: lease.arm,
    ageMs: Math.max(0, now - lease.grantedAt),
  };
}

export class HeldLeases {
  private readonly byCell = new Map<string, Map<string, OpenLease>>();
  private readonly instances = new Map<string, string>();
  private nextSweep = 0;

  /** A lease granted to this isolate in `cell`. */
  open(cell: string, lease: OpenLease, now: number): void {
    if (now >= this.nextSweep) this.sweep(now);
    let leases = this.byCell.get(cell);
    if (leases === undefined) {
      leases = new Map();
      this.byCell.set(cell, leases);
    }
    leases.set(lease.leaseId, lease);
  }

  /** The lease's end is being reported (or its retry ends it): it is no longer held. */
  close(cell: string, leaseId: string): void {
    const leases = this.byCell.get(cell);
    if (leases === undefined) return;
    leases.delete(leaseId);
    if (leases.size === 0) this.byCell.delete(cell);
  }

  /**
   * `instance` of `cell`'s RouterDO answered a route call. When it is not the instance this isolate
   * heard from before, returns the leases held of other instances, to re-announce; else none.
   */
  answered(cell: string, instance: string, now: number): ReopenedLease[] {
    const before = this.instances.get(cell);
    this.instances.set(cell, instance);
    if (before === undefined || before === instance) return [];
    const out: ReopenedLease[] = [];
    for (const l of this.byCell.get(cell)?.values() ?? [])
      if (l.instance !== instance && l.expiresAt > now)
        out.push({
          leaseId: l.leaseId,
          held: heldOf(l, now),
          ...(l.key !== undefined ? { key: l.key } : {}),
        });
    return out;
  }

  /** Leases held in `cell`. */
  held(cell: string): number {
    return this.byCell.get(cell)?.size ?? 0;
  }

  private sweep(now: number): void {
    this.nextSweep = now + SWEEP_EVERY_MS;
    for (const [cell, leases] of this.byCell) {
      for (const [id, l] of leases) if (l.expiresAt <= now) leases.delete(id);
      if (leases.size === 0) this.byCell.delete(cell);
    }
  }
}
