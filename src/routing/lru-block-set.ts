/**
 * A bounded LRU set of block keys in typed arrays: the per-backend memory of
 * the affinity index. No objects per entry, so a million blocks cost ~32-36
 * bytes each (see `bytes()` and the test that measures it), and the garbage
 * collector never walks them.
 *
 * Layout: a node pool (key, recency stamp, LRU prev/next, hash-chain next)
 * and a power-of-two bucket array of chain heads (separate chaining; load
 * factor ≤ 1). The pool grows by doubling up to `capacity`, so a backend
 * with a huge KV cache costs only what it holds.
 *
 * Every touch gets the next stamp of a per-set clock, and a touched node goes
 * to the head of the LRU list, so list order IS stamp order: "evict
 * everything at least as old as stamp s" pops from the tail.
 */
import type { BlockKey } from "./types";

const NIL = -1;
const MIN_SLOTS = 64;
const TWO_POW_32 = 4294967296;

function nextPow2(n: number): number {
  let p = 16;
  while (p < n) p *= 2;
  return p;
}

export class LruBlockSet {
  private cap: number;
  private slots = 0;
  private used = 0;
  private count = 0;
  private head = NIL;
  private tail = NIL;
  private freeHead = NIL;
  private clock = 1;
  private shift = 28;
  private keys = new Float64Array(0);
  private stamps = new Float64Array(0);
  private prev = new Int32Array(0);
  private next = new Int32Array(0);
  private chain = new Int32Array(0);
  private buckets = new Int32Array(0);

  constructor(capacityBlocks: number) {
    if (!Number.isInteger(capacityBlocks) || capacityBlocks < 1)
      throw new RangeError(`capacityBlocks must be a positive integer, got ${capacityBlocks}`);
    this.cap = capacityBlocks;
    this.allocate(Math.min(capacityBlocks, MIN_SLOTS));
  }

  get size(): number {
    return this.count;
  }

  get capacity(): number {
    return this.cap;
  }

  /** The stamp the next touch will get; every stamp handed out so far is below it. */
  get nextStamp(): number {
    return this.clock;
  }

  /** Bytes held by the typed arrays (the whole footprint but a few fields). */
  bytes(): number {
    return (
      this.keys.byteLength +
      this.stamps.byteLength +
      this.prev.byteLength +
      this.next.byteLength +
      this.chain.byteLength +
      this.buckets.byteLength
    );
  }

  has(key: BlockKey): boolean {
    return this.find(key) !== NIL;
  }

  /** Recency stamp of `key`, or -1 when absent. Larger is more recent. */
  stampOf(key: BlockKey): number {
    const n = this.find(key);
    return n === NIL ? -1 : this.stamps[n]!;
  }

  /**
   * Length of the longest prefix of `blocks` held here, by binary search.
   * Exact when the set is prefix-closed, which `touchChain` and the stamp-order
   * evictions maintain (a block is always more recent than its successors).
   */
  longestPrefix(blocks: readonly BlockKey[]): number {
    let lo = 0;
    let hi = blocks.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.find(blocks[mid - 1]!) !== NIL) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /**
   * Marks blocks[0..count) as used now, TAIL FIRST, so blocks[0] ends up most
   * recent: LRU then evicts a chain from its end, as vLLM frees a request's
   * blocks in reverse order, and the set stays prefix-closed. Inserts missing
   * blocks, evicting the least recent when full. Block j gets stamp
   * s0 + (count - 1 - j); returns s0. When `prevOut` is given, prevOut[j] (for
   * j < prevOut.length) receives the block's stamp before this touch, -1 if absent.
   */
  touchChain(blocks: readonly BlockKey[], count: number, prevOut?: Float64Array): number {
    const s0 = this.clock;
    const m = prevOut === undefined ? 0 : prevOut.length;
    for (let j = count - 1; j >= 0; j--) {
      const key = blocks[j]!;
      let n = this.find(key);
      if (n === NIL) {
        if (j < m) prevOut![j] = -1;
        n = this.insert(key);
      } else {
        if (j < m) prevOut![j] = this.stamps[n]!;
        this.unlink(n);
      }
      this.pushHead(n);
      this.stamps[n] = this.clock++;
    }
    return s0;
  }

  /** Evicts every entry with stamp ≤ `stamp` (all at least that old). Returns how many. */
  evictThrough(stamp: number): number {
    let evicted = 0;
    while (this.tail !== NIL && this.stamps[this.tail]! <= stamp) {
      this.remove(this.tail);
      evicted++;
    }
    return evicted;
  }

  /** Removes `key` only if nothing touched it since it got `stamp`. */
  removeIfStamp(key: BlockKey, stamp: number): boolean {
    const n = this.find(key);
    if (n === NIL || this.stamps[n] !== stamp) return false;
    this.remove(n);
    return true;
  }

  /** Changes the capacity (a backend's KV size was reconfigured); evicts the least recent to fit. */
  setCapacity(capacityBlocks: number): void {
    if (!Number.isInteger(capacityBlocks) || capacityBlocks < 1)
      throw new RangeError(`capacityBlocks must be a positive integer, got ${capacityBlocks}`);
    while (this.count > capacityBlocks) this.remove(this.tail);
    this.cap = capacityBlocks;
    if (this.slots > capacityBlocks) this.compact(Math.max(this.count, Math.min(capacityBlocks, MIN_SLOTS)));
  }

  private bucketOf(key: BlockKey): number {
    const h = (key >>> 0) ^ ((key / TWO_POW_32) >>> 0);
    return Math.imul(h, 0x9e3779b1) >>> this.shift;
  }

  private find(key: BlockKey): number {
    let n = this.buckets[this.bucketOf(key)]!;
    while (n !== NIL && this.keys[n] !== key) n = this.chain[n]!;
    return n;
  }

  private insert(key: BlockKey): number {
    let n: number;
    if (this.count >= this.cap) {
      n = this.tail;
      this.remove(n);
    }
    if (this.freeHead !== NIL) {
      n = this.freeHead;
      this.freeHead = this.chain[n]!;
    } else {
      if (this.used === this.slots) this.allocate(Math.min(this.cap, this.slots * 2));
      n = this.used++;
    }
    this.keys[n] = key;
    const b = this.bucketOf(key);
    this.chain[n] = this.buckets[b]!;
    this.buckets[b] = n;
    this.count++;
    return n;
  }

  /** Unlinks from the LRU list and the hash chain; the node goes to the free list. */
  private remove(n: number): void {
    this.unlink(n);
    const b = this.bucketOf(this.keys[n]!);
    let p = this.buckets[b]!;
    if (p === n) this.buckets[b] = this.chain[n]!;
    else {
      while (this.chain[p] !== n) p = this.chain[p]!;
      this.chain[p] = this.chain[n]!;
    }
    this.chain[n] = this.freeHead;
    this.freeHead = n;
    this.count--;
  }

  private unlink(n: number): void {
    const p = this.prev[n]!;
    const x = this.next[n]!;
    if (p === NIL) this.head = x;
    else this.next[p] = x;
    if (x === NIL) this.tail = p;
    else this.prev[x] = p;
  }

  private pushHead(n: number): void {
    this.prev[n] = NIL;
    this.next[n] = this.head;
    if (this.head !== NIL) this.prev[this.head] = n;
    this.head = n;
    if (this.tail === NIL) this.tail = n;
  }

  /** Grows the pool to `slots` nodes; node numbers are kept, so only the buckets are rebuilt. */
  private allocate(slots: number): void {
    const grow = <T extends Float64Array | Int32Array>(old: T, make: (n: number) => T): T => {
      const a = make(slots);
      a.set(old.subarray(0, Math.min(old.length, slots)) as ArrayLike<number>);
      return a;
    };
    this.keys = grow(this.keys, (n) => new Float64Array(n));
    this.stamps = grow(this.stamps, (n) => new Float64Array(n));
    this.prev = grow(this.prev, (n) => new Int32Array(n));
    this.next = grow(this.next, (n) => new Int32Array(n));
    this.chain = grow(this.chain, (n) => new Int32Array(n));
    this.slots = slots;
    const nb = nextPow2(slots);
    if (nb !== this.buckets.length) {
      this.buckets = new Int32Array(nb).fill(NIL);
      this.shift = 32 - Math.log2(nb);
      for (let n = this.tail; n !== NIL; n = this.prev[n]!) {
        const b = this.bucketOf(this.keys[n]!);
        this.chain[n] = this.buckets[b]!;
        this.buckets[b] = n;
      }
    }
  }

  /** Rebuilds into `slots` nodes, renumbering from the LRU tail so stamps and order are kept. */
  private compact(slots: number): void {
    const keys: number[] = [];
    const stamps: number[] = [];
    for (let n = this.tail; n !== NIL; n = this.prev[n]!) {
      keys.push(this.keys[n]!);
      stamps.push(this.stamps[n]!);
    }
    this.keys = new Float64Array(0);
    this.stamps = new Float64Array(0);
    this.prev = new Int32Array(0);
    this.next = new Int32Array(0);
    this.chain = new Int32Array(0);
    this.buckets = new Int32Array(0);
    this.used = 0;
    this.count = 0;
    this.head = NIL;
    this.tail = NIL;
    this.freeHead = NIL;
    this.slots = 0;
    this.allocate(slots);
    for (let i = 0; i < keys.length; i++) {
      const n = this.insert(keys[i]!);
      this.pushHead(n);
      this.stamps[n] = stamps[i]!;
    }
  }
}
