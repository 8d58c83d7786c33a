/**
 * The prefix keys seen so far, in at most `maxBytes`: exact until it holds
 * `capacity` keys, then it remembers at least the `capacity` most recently
 * used ones (and at most twice that). Two generations of one exact hash set
 * each: keys go into the current one; a key found only in the previous one
 * is copied forward; when the current one is full, the previous one is
 * dropped and the current one becomes it. An LRU approximation without
 * per-key links (the idea of a two-generation or "2Q-lite" cache), 8 bytes a
 * key.
 *
 * For the analysis this means: reuse of a prefix is counted exactly when it
 * comes back within `capacity` distinct prefix keys of its last use; from
 * farther back it may be missed, so once the set has rotated the shared
 * share is a lower bound (the report says so). Touching a request's keys in
 * chain order keeps what is remembered prefix-closed: a key's ancestors are
 * used at least as recently as the key.
 *
 * Each generation is open addressing with linear probing over one
 * Float64Array (key + 1, 0 = empty: keys are integers below 2^53), at most
 * 3/4 full. Memory: the first generation grows by doubling (old and new
 * arrays at once: 12 bytes a slot at the last step); from the first rotation
 * on, two full tables (16 bytes a slot), the dropped one's array reused. Slots per generation: the largest
 * power of two with 16 bytes a slot within `maxBytes`; 256 MiB gives 2^24
 * slots, 12.6 M keys.
 */
import { hashKey } from "../../src/routing/hash";

const MAX_LOAD = 0.75;
const INITIAL_SLOTS = 1 << 12;
const BYTES_PER_SLOT = 16;

class KeyTable {
  slots: Float64Array;
  mask: number;
  size = 0;

  constructor(slots: number) {
    this.slots = new Float64Array(slots);
    this.mask = slots - 1;
  }

  has(key: number): boolean {
    const v = key + 1;
    for (let i = hashKey(key) & this.mask; ; i = (i + 1) & this.mask) {
      const s = this.slots[i]!;
      if (s === v) return true;
      if (s === 0) return false;
    }
  }

  /** Adds a key; false when it was there already. */
  add(key: number): boolean {
    const v = key + 1;
    for (let i = hashKey(key) & this.mask; ; i = (i + 1) & this.mask) {
      const s = this.slots[i]!;
      if (s === v) return false;
      if (s === 0) {
        this.slots[i] = v;
        this.size++;
        return true;
      }
    }
  }

  get full(): boolean {
    return this.size >= this.slots.length * MAX_LOAD;
  }

  /** The same keys in a table twice the size. */
  doubled(): KeyTable {
    const next = new KeyTable(this.slots.length * 2);
    for (const v of this.slots) if (v !== 0) next.add(v - 1);
    return next;
  }
}

export class RecentKeySet {
  private current: KeyTable;
  private previous: KeyTable | null = null;
  private rotations = 0;
  /** Slots of one generation at its largest. */
  readonly maxSlots: number;

  constructor(maxBytes: number) {
    let slots = INITIAL_SLOTS;
    while (slots * 2 * BYTES_PER_SLOT <= maxBytes) slots *= 2;
    if (slots * BYTES_PER_SLOT > maxBytes)
      throw new RangeError(
        `the key set needs at least ${(INITIAL_SLOTS * BYTES_PER_SLOT) >> 10} KiB, got ${maxBytes} bytes`,
      );
    this.maxSlots = slots;
    this.current = new KeyTable(INITIAL_SLOTS);
  }

  /** Keys one generation holds: remembered for at least this many distinct keys after their last use. */
  get capacity(): number {
    return Math.floor(this.maxSlots * MAX_LOAD);
  }

  /** True until the first rotation: every key ever added is still there. */
  get exact(): boolean {
    return this.rotations === 0;
  }

  /** Distinct keys remembered now. */
  get size(): number {
    return this.current.size + (this.previous?.size ?? 0);
  }

  get bytes(): number {
    return this.current.slots.byteLength + (this.previous?.slots.byteLength ?? 0);
  }

  /** The current generation becomes the previous one; the dropped one's memory is reused, emptied. */
  private rotate(): void {
    const recycled = this.previous;
    this.previous = this.current;
    if (recycled === null) this.current = new KeyTable(this.maxSlots);
    else {
      recycled.slots.fill(0);
      recycled.size = 0;
      this.current = recycled;
    }
    this.rotations++;
  }

  /** Whether the key was remembered; either way it is now, as the most recently used. */
  touch(key: number): boolean {
    if (this.current.has(key)) return true;
    const known = this.previous?.has(key) ?? false;
    this.current.add(key);
    if (this.current.full) {
      if (this.current.slots.length < this.maxSlots) this.current = this.current.doubled();
      else this.rotate();
    }
    return known;
  }
}
