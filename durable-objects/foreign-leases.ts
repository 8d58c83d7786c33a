/**
 * Which leases granted by an earlier instance of this RouterDO have ended
 * here. An object is evicted after a while without calls and restarted by
 * every deploy (Cloudflare, "Lifecycle of a Durable Object"), and its
 * in-memory lease book goes with it; the Workers holding the streams still
 * know their leases and re-announce them (reopen) or report their end with
 * what they hold (backend, granting instance). This instance applies each
 * such end once: a report sent twice (a carried report resent after a
 * timeout) is skipped. Bounded: the oldest ids are forgotten first
 * (FOREIGN_LEASES_REMEMBERED), which only matters for a duplicate arriving
 * after that many other foreign ends.
 */
import { BoundedSet } from "../src/routing/bounded-set";

export class ForeignLeases {
  private readonly ended: BoundedSet<string>;

  constructor(limit: number) {
    this.ended = new BoundedSet(limit);
  }

  /** Was this foreign lease's end already applied here? */
  hasEnded(id: string): boolean {
    return this.ended.has(id);
  }

  /** Records that a foreign lease ended here. */
  markEnded(id: string): void {
    // A repeat keeps its place: it is forgotten as old as its first end.
    if (!this.ended.has(id)) this.ended.add(id);
  }

  get size(): number {
    return this.ended.size;
  }
}
