/**
 * Lease ends waiting in this isolate to ride on the next route call to their
 * RouterDO (REPORT_CARRY_MS, defaults.ts): per cell, in the order they
 * were reported. A report is taken once, either by a route call that carries
 * it or by its own sender's flush when no route call came in time; whoever
 * takes it owns its delivery from then on. Holds no I/O and no promises, so
 * requests of one isolate can share it (a stub or promise of one request
 * must not be used by another).
 */
import type { CarriedComplete } from "./router-rpc";

/** A queued report, as its sender holds it: still waiting, or taken by some call. */
export interface OutboxEntry {
  readonly item: CarriedComplete;
  taken: boolean;
}

export class CompleteOutbox {
  private readonly byCell = new Map<string, OutboxEntry[]>();

  /** Queues a lease's end for `cell` (a RouterDO name). */
  add(cell: string, item: CarriedComplete): OutboxEntry {
    const entry: OutboxEntry = { item, taken: false };
    const queue = this.byCell.get(cell);
    if (queue === undefined) this.byCell.set(cell, [entry]);
    else queue.push(entry);
    return entry;
  }

  /** Takes the oldest `max` waiting reports of `cell`; the caller now owns their delivery. */
  take(cell: string, max: number): CarriedComplete[] {
    const queue = this.byCell.get(cell);
    if (queue === undefined) return [];
    const out = queue.splice(0, max);
    if (queue.length === 0) this.byCell.delete(cell);
    for (const e of out) e.taken = true;
    return out.map((e) => e.item);
  }

  /** Reports waiting for `cell`. */
  waiting(cell: string): number {
    return this.byCell.get(cell)?.length ?? 0;
  }
}
