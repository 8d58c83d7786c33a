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
 */
import type { BlockKey } from "./types";

export class PendingPrefill {
  /** Per backend: block key → predicted end of the prefill that computes it (ms). */
  private byBackend: Map<BlockKey, number>[] = [];

  /** Forgets everything: the backend list changed, indices mean other backends. */
  reset(size: number): void {
    this.byBackend = Array.from({ length: size }, () => new Map<BlockKey, number>());
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
      if (m.get(k) === end) m.delete(k);
    }
  }

  /** Whether backend i is still computing `key` at `now`. */
  isPending(i: number, key: BlockKey, now: number): boolean {
    const end = this.byBackend[i]?.get(key);
    return end !== undefined && end > now;
  }
}
