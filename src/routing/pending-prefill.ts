/**
 * Blocks a backend is still prefilling for our in-flight requests: each
 * request's blocks past what the backend already held, until its predicted
 * prefill end (the cost model's slot) or its completion, whichever is first.
 *
 * prefix_aware reads it to tell a prefix its home is still computing from one
 * the home already holds: under vLLM V1 a request that joins the first kind
 * reuses each block from the step that schedules it, so its own time to first
 * token is about the same at the home as anywhere else (the rest of that
 * prefill, or all of it again), and only the duplicated work tells them apart.
 *
 * It also keeps, per pending block, when the earliest of our requests that joined it arrived: the joiners
 * get their first tokens together after the step that computes it, so the earliest waits for the whole
 * batch (./burst-split.ts).
 */
import type { BlockKey } from "./types";

/** The earliest of our requests that joined a pending block: its arrival, and the prefill it waits for. */
interface Joined {
  readonly at: number;
  readonly end: number;
}

export class PendingPrefill {
  /** Per backend: block key → predicted end of the prefill that computes it (ms). */
  private byBackend: Map<BlockKey, number>[] = [];
  /** Per backend: pending block key → the earliest of our requests that joined it (see joined()). */
  private joiners: Map<BlockKey, Joined>[] = [];

  /** Forgets everything: the backend list changed, indices mean other backends. */
  reset(size: number): void {
    this.byBackend = Array.from({ length: size }, () => new Map<BlockKey, number>());
    this.joiners = Array.from({ length: size }, () => new Map<BlockKey, Joined>());
  }

  /**
   * A request of ours, arriving at `now`, was sent to backend i to reuse `key` while i still computes it.
   * Under vLLM V1 every request that joins a prefix in flight is scheduled in the step after the one that
   * computes it, so they get their first tokens together: the earliest joiner waits the longest.
   */
  joined(i: number, key: BlockKey, now: number): void {
    const end = this.byBackend[i]?.get(key);
    if (end === undefined || !(end > now)) return;
    const j = this.joiners[i]!;
    const prev = j.get(key);
    if (prev === undefined || prev.end !== end) j.set(key, { at: now, end });
  }

  /** When the earliest request of ours still waiting for backend i to compute `key` arrived; undefined for none. */
  firstJoinAt(i: number, key: BlockKey, now: number): number | undefined {
    const end = this.byBackend[i]?.get(key);
    if (end === undefined || !(end > now)) return undefined;
    const first = this.joiners[i]?.get(key);
    return first !== undefined && first.end === end ? first.at : undefined;
  }

  /** Backend i computes blocks[from..] until `end`. */
  add(i: number, blocks: readonly BlockKey[], from: number, end: number): void {
    const m = this.byBackend[i];
    if (m === undefined) return;
    for (let j = from; j < blocks.length; j++) {
      const k = blocks[j]!;
      if ((m.get(k) ?? -1) < end) m.set(k, end);
    }
  }

  /** The request that computed blocks[from..] on i ended: its blocks are computed (or never will be). */
  done(i: number, blocks: readonly BlockKey[], from: number, end: number): void {
    const m = this.byBackend[i];
    if (m === undefined) return;
    for (let j = from; j < blocks.length; j++) {
      const k = blocks[j]!;
      // A later request that re-added the key keeps it pending.
      if (m.get(k) === end) {
        m.delete(k);
        this.joiners[i]!.delete(k);
      }
    }
  }

  /** Whether backend i is still computing `key` at `now`. */
  isPending(i: number, key: BlockKey, now: number): boolean {
    const end = this.byBackend[i]?.get(key);
    return end !== undefined && end > now;
  }
}
