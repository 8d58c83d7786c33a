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
 * It also counts, per pending block, our requests that joined it: the joiners get their first tokens
 * together, at the end of the step after the one that computes it, so each new joiner's suffix delays
 * every joiner already waiting (./burst-split.ts).
 */
import type { BlockKey } from "./types";

/** Our requests that joined a pending block: how many, and the prefill they wait for. */
interface Joined {
  readonly count: number;
  readonly end: number;
}

export class PendingPrefill {
  /** Per backend: block key → predicted end of the prefill that computes it (ms). */
  private byBackend: Map<BlockKey, number>[] = [];
  /** Per backend: pending block key → our requests that joined it (see joined()). */
  private joiners: Map<BlockKey, Joined>[] = [];

  /** Forgets everything: the backend list changed, indices mean other backends. */
  reset(size: number): void {
    this.byBackend = Array.from({ length: size }, () => new Map<BlockKey, number>());
    this.joiners = Array.from({ length: size }, () => new Map<BlockKey, Joined>());
  }

  /**
   * A request of ours, arriving at `now`, was sent to backend i to reuse `key` while i still computes it.
   * Under vLLM V1 every request that joins a prefix in flight is scheduled in the step after the one that
   * computes it, so they get their first tokens together, in one step that carries every joiner's suffix.
   */
  joined(i: number, key: BlockKey, now: number): void {
    const end = this.byBackend[i]?.get(key);
    if (end === undefined || !(end > now)) return;
    const j = this.joiners[i]!;
    const prev = j.get(key);
    // Joiners of an earlier computation of the block (another prefill's end) are not this one's.
    j.set(key, { count: prev !== undefined && prev.end === end ? prev.count + 1 : 1, end });
  }

  /** Our requests still waiting for backend i to compute `key` (they joined it while pending); 0 for none. */
  joinersOf(i: number, key: BlockKey, now: number): number {
    const end = this.byBackend[i]?.get(key);
    if (end === undefined || !(end > now)) return 0;
    const j = this.joiners[i]?.get(key);
    return j !== undefined && j.end === end ? j.count : 0;
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
