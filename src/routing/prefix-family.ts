/**
 * A prefix family: the requests that share a prefix up to a given depth
 * (block position `depth`, whose chained key names the family). The cell
 * choice (cell-chooser.ts) keeps, per family: its share of the traffic (a
 * decayed count) and where its requests diverge — how many leading blocks
 * the family's recent requests all share — learnt from the chained keys:
 * two requests share their first j blocks exactly when their keys at j − 1
 * agree, so one reference request and a binary search give the length of
 * a common prefix.
 *
 * The divergence depth is the minimum over the last few requests' common
 * prefix with the reference: requests of the reference's own conversation
 * share more with it (their history), requests of other conversations share
 * only the family's common part (a system prompt); the minimum over a
 * window is the latter as soon as one other conversation was seen.
 */
import type { BlockKey } from "./types";

/** Blocks of the reference request kept past the family's depth: deeper sharing is found one family level down. */
export const REFERENCE_BLOCKS = 64;
/** Recent common-prefix lengths the divergence depth is the minimum of. */
const WINDOW = 8;

/** A count that halves every `halfLifeMs`. */
export class DecayedCount {
  private value = 0;
  private at = Number.NEGATIVE_INFINITY;

  constructor(private readonly halfLifeMs: number) {}

  add(now: number): void {
    this.value = this.read(now) + 1;
    this.at = Math.max(this.at, now);
  }

  read(now: number): number {
    if (this.value === 0) return 0;
    return this.value * 2 ** (-Math.max(0, now - this.at) / this.halfLifeMs);
  }
}

export class PrefixFamily {
  /** Split where its requests diverge (its share of the traffic filled a cell). */
  split = false;
  readonly rate: DecayedCount;
  /** The reference request's keys at positions depth + 1 … depth + REFERENCE_BLOCKS. */
  private reference: Float64Array | undefined;
  private readonly common = new Int32Array(WINDOW);
  private seen = 0;

  constructor(
    /** Block position of the key that names the family. */
    readonly depth: number,
    halfLifeMs: number,
  ) {
    this.rate = new DecayedCount(halfLifeMs);
  }

  /** Learns from one request of the family: how far it shares the reference's prefix. */
  observe(blocks: readonly BlockKey[]): void {
    const from = this.depth + 1;
    const ref = this.reference;
    if (ref === undefined) {
      const n = Math.max(0, Math.min(REFERENCE_BLOCKS, blocks.length - from));
      this.reference = new Float64Array(n);
      for (let i = 0; i < n; i++) this.reference[i] = blocks[from + i]!;
      return;
    }
    // Largest j with blocks[from + j - 1] === ref[j - 1]: chained keys agree on a prefix, then never again.
    let lo = 0;
    let hi = Math.min(ref.length, blocks.length - from);
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (blocks[from + mid - 1] === ref[mid - 1]) lo = mid;
      else hi = mid - 1;
    }
    this.common[this.seen % WINDOW] = from + lo;
    this.seen++;
  }

  /**
   * Leading blocks the family's requests share (the block after them is
   * where they diverge), or undefined before any comparison was made.
   */
  sharedBlocks(): number | undefined {
    if (this.seen === 0) return undefined;
    let min = Number.POSITIVE_INFINITY;
    for (let i = 0; i < Math.min(this.seen, WINDOW); i++) min = Math.min(min, this.common[i]!);
    return min;
  }
}
