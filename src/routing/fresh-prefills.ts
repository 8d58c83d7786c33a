/**
 * Prefixes of ours being computed from scratch somewhere in the fleet: requests sent to a backend that held
 * none of their prompt (the first prefill of a new prefix, or a copy of one), at least a prefix long, from
 * their routing until their predicted prefill end (the cost model's slot) or their completion.
 *
 * The burst split's clustering guard reads it (./burst-split.ts): each other prefix being computed from scratch
 * is a burst under way, which may still want a backend of the idle ones (its own copy), and their number is
 * what the idle backends must cover after a copy, with one more for the next new burst.
 * A prefix is named by the first block key of the request (keys are chained and seeded by model and tenant,
 * so two requests share their first key only if they share their first block).
 */
import type { BlockKey } from "./types";

interface Fresh {
  readonly backend: number;
  readonly prefix: BlockKey;
  readonly end: number;
}

export class FreshPrefills {
  private entries: Fresh[] = [];

  /** Forgets everything: the backend list changed, indices mean other backends. */
  reset(): void {
    this.entries = [];
  }

  /** Backend i computes, from scratch, the prompt that starts with block `prefix`, until `end` (ms). */
  add(i: number, prefix: BlockKey, end: number): void {
    this.entries.push({ backend: i, prefix, end });
  }

  /** That request ended (its prefill too, or it never will): it no longer counts. */
  done(i: number, prefix: BlockKey, end: number): void {
    const k = this.entries.findIndex((e) => e.backend === i && e.prefix === prefix && e.end === end);
    if (k >= 0) this.entries.splice(k, 1);
  }

  /** How many prefixes other than `prefix` are being computed from scratch anywhere at `now` (a copy is its prefix). */
  othersPending(prefix: BlockKey, now: number): number {
    // Past their predicted end they are computed: drop them here, so that the list holds only what is pending.
    this.entries = this.entries.filter((e) => e.end > now);
    const others = new Set<BlockKey>();
    for (const e of this.entries) if (e.prefix !== prefix) others.add(e.prefix);
    return others.size;
  }
}
