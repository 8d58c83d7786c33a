/**
 * The conversations a cell was sent, relayed to every Worker isolate so that
 * "placed before" (cell-chooser.ts, step 4) is the pool's fact, not one
 * isolate's memory.
 *
 * Why: a continuing conversation (a split-off family) leaves its home cell
 * only at CELL_KEEP_FACTOR × the home's share, a new one at c. An isolate
 * knew a conversation only if the conversation's earlier turns had passed
 * through it; with eight isolates most turns arrive at one that has not seen
 * the conversation, which then treats it as new and moves it at c (5.7% of
 * multi-turn's requests off their home cell at K = 4, against 3.5% with one
 * isolate; bench/results/scale.md, "Cells"). Every cell sees all isolates'
 * calls to it, so it can pass on what any one of them placed.
 *
 * How, with nothing but the route call: a call whose family is new to its
 * isolate names that family's key (8 bytes); the cell keeps the last
 * CELL_RELAY_FAMILIES such keys it was told of (no repeats) and every route
 * response carries them; an isolate adds what it reads to a bounded set of
 * families it counts as continuing. A conversation is thus known to every
 * isolate that calls the cell within the next few new conversations there.
 * Keys only, never where a family went: step 4 keeps a continuing family at
 * its ring home, which every isolate computes alike.
 */
import { BoundedSet } from "./bounded-set";
import { CELL_RELAY_FAMILIES } from "./defaults";
import type { BlockKey } from "./types";

/** A cell's side: the last keys it was told were newly placed, oldest first. */
export class RecentFamilies {
  private readonly keys: BlockKey[] = [];

  constructor(readonly capacity: number = CELL_RELAY_FAMILIES) {}

  /** `key` was placed in this cell by an isolate that had not seen it; a repeat is not kept twice. */
  note(key: BlockKey): void {
    if (this.keys.includes(key)) return;
    this.keys.push(key);
    if (this.keys.length > this.capacity) this.keys.shift();
  }

  /** The keys for a route response (a copy: the caller may keep it). */
  toWire(): BlockKey[] {
    return this.keys.slice();
  }
}

/**
 * A cell's side of one route call: notes the family the call placed (if it
 * named one: a finite number; anything else is ignored, as the relay is a
 * hint) and returns the keys for the response. The RouterDO and the
 * simulator both run it.
 */
export function relayCellFamilies(view: RecentFamilies, placed: unknown): BlockKey[] {
  if (typeof placed === "number" && Number.isFinite(placed)) view.note(placed);
  return view.toWire();
}

/**
 * An isolate's side: the families other isolates' calls placed, as route
 * responses relayed them, least recently heard of forgotten first, at most
 * `capacity` (CELL_FAMILY_MEMORY) keys.
 */
export class RelayedFamilies {
  private readonly keys: BoundedSet<BlockKey>;

  constructor(capacity: number) {
    this.keys = new BoundedSet(capacity);
  }

  get capacity(): number {
    return this.keys.capacity;
  }

  has(key: BlockKey): boolean {
    return this.keys.has(key);
  }

  get size(): number {
    return this.keys.size;
  }

  /** Takes a response's keys; anything malformed is skipped, and at most `capacity` keys are read. */
  learn(wire: readonly unknown[]): void {
    const n = Math.min(wire.length, this.capacity);
    for (let i = 0; i < n; i++) {
      const key = wire[i];
      if (typeof key !== "number" || !Number.isFinite(key)) continue;
      this.keys.add(key);
    }
  }
}
