/**
 * A fixed-capacity hash map from block key (a non-negative integer below
 * 2^53) to slot index, for the KV block pool's hot path. Open addressing with
 * linear probing and backward-shift deletion (Knuth 6.4, Algorithm R), in one
 * interleaved Float64Array ([key, value] pairs, so a probe touches one cache
 * line): a simulator run does hundreds of millions of lookups across many
 * engines, and a JS Map keyed by non-Smi doubles is several times slower and
 * allocates.
 */

const EMPTY = -1;

export class KeyMap {
  /** [key0, val0, key1, val1, ...]; val EMPTY marks a free cell. */
  private readonly cells: Float64Array;
  private readonly mask: number;
  private count = 0;
  private readonly maxCount: number;

  /** `maxEntries` is a hard bound: the pool never caches more keys than it has blocks. */
  constructor(maxEntries: number) {
    let cap = 16;
    while (cap < maxEntries * 2) cap *= 2;
    this.cells = new Float64Array(cap * 2);
    for (let i = 1; i < cap * 2; i += 2) this.cells[i] = EMPTY;
    this.mask = cap - 1;
    this.maxCount = maxEntries;
  }

  get size(): number {
    return this.count;
  }

  /** Makes this map an exact copy of `src` (same capacity), reusing this map's storage. */
  copyFrom(src: KeyMap): void {
    if (src.cells.length !== this.cells.length) throw new RangeError("KeyMap.copyFrom: capacities differ");
    this.cells.set(src.cells);
    this.count = src.count;
  }

  /** The slot stored under `key`, or -1. */
  get(key: number): number {
    const c = this.cells;
    let i = this.home(key);
    for (;;) {
      const v = c[2 * i + 1]!;
      if (v === EMPTY || c[2 * i] === key) return v;
      i = (i + 1) & this.mask;
    }
  }

  /** Stores `val` under `key` unless the key is present; true when stored. One probe sequence. */
  setIfAbsent(key: number, val: number): boolean {
    const c = this.cells;
    let i = this.home(key);
    for (;;) {
      if (c[2 * i + 1] === EMPTY) break;
      if (c[2 * i] === key) return false;
      i = (i + 1) & this.mask;
    }
    if (this.count >= this.maxCount) throw new RangeError(`KeyMap full (${this.maxCount} entries)`);
    c[2 * i] = key;
    c[2 * i + 1] = val;
    this.count++;
    return true;
  }

  /** Changes the value of a present key; false when absent. */
  replace(key: number, val: number): boolean {
    const c = this.cells;
    let i = this.home(key);
    for (;;) {
      if (c[2 * i + 1] === EMPTY) return false;
      if (c[2 * i] === key) {
        c[2 * i + 1] = val;
        return true;
      }
      i = (i + 1) & this.mask;
    }
  }

  delete(key: number): boolean {
    const c = this.cells;
    const mask = this.mask;
    let i = this.home(key);
    for (;;) {
      if (c[2 * i + 1] === EMPTY) return false;
      if (c[2 * i] === key) break;
      i = (i + 1) & mask;
    }
    // Backward shift: pull later entries of the probe run into the hole so
    // lookups never need tombstones.
    let hole = i;
    let j = (i + 1) & mask;
    while (c[2 * j + 1] !== EMPTY) {
      const h = this.home(c[2 * j]!);
      // Entry j may stay only if its home lies cyclically in (hole, j].
      const stays = hole <= j ? hole < h && h <= j : hole < h || h <= j;
      if (!stays) {
        c[2 * hole] = c[2 * j]!;
        c[2 * hole + 1] = c[2 * j + 1]!;
        hole = j;
      }
      j = (j + 1) & mask;
    }
    c[2 * hole + 1] = EMPTY;
    this.count--;
    return true;
  }

  private home(key: number): number {
    // Keys are chained hashes already, but tests and traces use small ints: mix both halves.
    const lo = key >>> 0;
    const hi = (key / 4294967296) >>> 0;
    let h = Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1);
    h ^= h >>> 15;
    return h & this.mask;
  }
}
