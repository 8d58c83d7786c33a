/**
 * A bounded LRU set of block keys in typed arrays: the per-backend memory of
 * the affinity index. No objects per entry, so a million blocks cost ~32-36
 * bytes each (see `bytes()` and the test that measures it), and the garbage
 * collector never walks them.
 *
 * Layout: a node pool of 32-byte records in one buffer — key (f64), recency
 * stamp (f64), LRU prev/next, hash-chain next and pin count (i32) — so a touch reads
 * one cache line per node instead of one per field (this halved the cost of
 * a 512-block touch in bench/micro/routing-decision.ts), and a power-of-two
 * bucket array of chain heads (separate chaining; load factor ≤ 1). The pool
 * grows by doubling up to `capacity`, so a backend with a huge KV cache
 * costs only what it holds.
 *
 * Every touch gets the next stamp of a per-set clock, and a touched node goes
 * to the head of the LRU list, so list order IS stamp order: "evict
 * everything at least as old as stamp s" pops from the tail.
 *
 * An entry may also be anonymous (`occupy`): it holds one entry of capacity
 * and ages like the others, but no key finds it (its key is NaN and it sits
 * in no hash chain). It stands for cache the engine fills with blocks the
 * index does not key (affinity-index.ts says which).
 *
 * A pinned entry (`pin`) is not evicted to make room: when it reaches the
 * tail it is moved to the head with a fresh stamp, as vLLM keeps the blocks
 * of running requests out of its free queue. (If every entry is pinned, or
 * MAX_SPARED were spared in a row, the least recent goes anyway: an insert's
 * work stays bounded however much is pinned.) Eviction by stamp
 * (`evictThrough`) takes pinned entries too: it acts on evidence that the
 * engine lost them.
 */
import type { BlockKey } from "./types";

const NIL = -1;
const MIN_SLOTS = 64;
const TWO_POW_32 = 4294967296;
/**
 * Pinned entries spared in a row at most; then the least recent goes, pinned or not. Bounds an insert's
 * work when most entries are pinned (requests in flight fill the index): sparing without a bound made
 * touches quadratic there (the policy invariant test's 30,000 requests took minutes).
 */
const MAX_SPARED = 64;
/** Bytes per node record; f64 index n*4 = key, n*4+1 = stamp; i32 index n*8+4 = prev, +5 = next, +6 = chain, +7 = pins. */
const RECORD_BYTES = 32;

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
  private anon = 0;
  /** Entries whose pin count is > 0. */
  private pinned = 0;
  private held = 0;
  private head = NIL;
  private tail = NIL;
  private freeHead = NIL;
  private clock = 1;
  private shift = 28;
  private f64 = new Float64Array(0);
  private i32 = new Int32Array(0);
  private buckets = new Int32Array(0);
  /**
   * Nodes of the last chain walk (touch or pin), by position in the chain: lets the pass that follows
   * over the same chain (pin after touch, touch after unpin) skip the hash lookups. Reused, never per call.
   */
  private chainNodes = new Int32Array(0);

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

  /** Capacity set aside by `reserve`: what the entries may fill is capacity − reserved (at least 1). */
  get reserved(): number {
    return this.held;
  }

  /**
   * Entries pinned by requests in flight, each once however many pin it: the distinct keyed blocks the
   * engine keeps out of its free queue for its running requests (vLLM's block pool ref counts).
   */
  get pinnedEntries(): number {
    return this.pinned;
  }

  /** Entries held by `occupy` (anonymous), included in `size`. */
  get anonymous(): number {
    return this.anon;
  }

  /** The stamp the next touch will get; every stamp handed out so far is below it. */
  get nextStamp(): number {
    return this.clock;
  }

  /** Bytes held by the typed arrays (the whole footprint but a few fields). */
  bytes(): number {
    return this.f64.byteLength + this.buckets.byteLength;
  }

  has(key: BlockKey): boolean {
    return this.find(key) !== NIL;
  }

  /** Recency stamp of `key`, or -1 when absent. Larger is more recent. */
  stampOf(key: BlockKey): number {
    const n = this.find(key);
    return n === NIL ? -1 : this.f64[(n << 2) + 1]!;
  }

  /**
   * Length of the longest prefix of `blocks` held here, by binary search.
   * Exact when the set is prefix-closed, which `touchChain` and the stamp-order
   * evictions maintain (a block is always more recent than its successors).
   */
  longestPrefix(blocks: readonly BlockKey[]): number {
    // Most backends hold none of a given prefix: one lookup settles those.
    if (blocks.length === 0 || this.find(blocks[0]!) === NIL) return 0;
    let lo = 1;
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
    return this.touch(blocks, count, prevOut, false);
  }

  /**
   * `touchChain`, then `pin(blocks, count, 1)` — identical in effect, but the pins reach the nodes the
   * touch just found instead of looking every key up again (half the hash lookups of a route's record).
   */
  touchAndPinChain(blocks: readonly BlockKey[], count: number, prevOut?: Float64Array): number {
    const s0 = this.touch(blocks, count, prevOut, false);
    this.pinNodes(blocks, count, 1);
    return s0;
  }

  /**
   * `touchChain` for the chain the last `pin` or `unpinChain` call walked (a completion's unpin then re-touch):
   * identical in effect, but it starts from the nodes that call found instead of looking every key
   * up again. Any entry changed since (evicted, reused) is looked up as usual.
   */
  retouchChain(blocks: readonly BlockKey[], count: number): number {
    return this.touch(blocks, count, undefined, true);
  }

  /**
   * The walk behind the three touches. Node j of the walk is left in `chainNodes[j]`; with `hinted`,
   * `chainNodes[j]` on entry is where to look for blocks[j] first (see `findHinted`).
   */
  private touch(
    blocks: readonly BlockKey[],
    count: number,
    prevOut: Float64Array | undefined,
    hinted: boolean,
  ): number {
    const s0 = this.clock;
    const m = prevOut === undefined ? 0 : prevOut.length;
    const nodes = this.chainScratch(count);
    for (let j = count - 1; j >= 0; j--) {
      const key = blocks[j]!;
      let n = hinted ? this.findHinted(key, nodes[j]!) : this.find(key);
      if (n === NIL) {
        if (j < m) prevOut![j] = -1;
        n = this.insert(key);
      } else {
        if (j < m) prevOut![j] = this.f64[(n << 2) + 1]!;
        if (n === this.head) {
          nodes[j] = n;
          this.f64[(n << 2) + 1] = this.clock++;
          continue;
        }
        this.unlink(n);
      }
      nodes[j] = n;
      this.pushHead(n);
      this.f64[(n << 2) + 1] = this.clock++;
    }
    return s0;
  }

  /**
   * Adds `count` anonymous entries as the most recent (at most the capacity), evicting the least recent
   * to fit. Returns how many were added.
   */
  occupy(count: number): number {
    if (!Number.isInteger(count) || count < 0)
      throw new RangeError(`occupy: count must be an integer >= 0, got ${count}`);
    const n = Math.min(count, this.room());
    for (let i = 0; i < n; i++) {
      const node = this.insert(Number.NaN);
      this.pushHead(node);
      this.f64[(node << 2) + 1] = this.clock++;
    }
    return n;
  }

  /**
   * Sets `delta` more (or, negative, fewer) entries of capacity aside, evicting the least recent to fit:
   * cache the engine holds that no entry stands for yet (blocks pinned by requests in flight).
   */
  reserve(delta: number): void {
    if (!Number.isInteger(delta)) throw new RangeError(`reserve: delta must be an integer, got ${delta}`);
    this.held = Math.max(0, this.held + delta);
    this.makeRoom(this.room());
  }

  /**
   * Adds `delta` (±1) to the pin count of each of blocks[0..count) held here (absent ones are skipped; a
   * count never goes below 0). A pinned entry is not evicted to make room.
   */
  pin(blocks: readonly BlockKey[], count: number, delta: 1 | -1): void {
    const nodes = this.chainScratch(count);
    for (let j = 0; j < count; j++) {
      const n = this.find(blocks[j]!);
      nodes[j] = n;
      if (n !== NIL) this.addPin(n, delta);
    }
  }

  /**
   * `pin(blocks, count, -1)` starting from `hints[j]`, the node blocks[j] had when it was pinned
   * (`chainNodesOf` after `touchAndPinChain`): identical in effect, each hint is checked (`findHinted`),
   * and the nodes are left for `retouchChain`.
   */
  unpinChain(blocks: readonly BlockKey[], count: number, hints: Int32Array): void {
    const nodes = this.chainScratch(count);
    for (let j = 0; j < count; j++) {
      const n = this.findHinted(blocks[j]!, j < hints.length ? hints[j]! : NIL);
      nodes[j] = n;
      if (n !== NIL) this.addPin(n, -1);
    }
  }

  /** A copy of the nodes the last chain walk found for its first `count` blocks: hints for a later walk. */
  chainNodesOf(count: number): Int32Array {
    return this.chainScratch(count).slice(0, count);
  }

  /** `pin` over the nodes the last walk left in `chainNodes` (each checked, see `findHinted`). */
  private pinNodes(blocks: readonly BlockKey[], count: number, delta: 1 | -1): void {
    const nodes = this.chainNodes;
    for (let j = 0; j < count; j++) {
      const n = this.findHinted(blocks[j]!, nodes[j]!);
      if (n !== NIL) this.addPin(n, delta);
    }
  }

  private addPin(n: number, delta: 1 | -1): void {
    const i32 = this.i32;
    const before = i32[(n << 3) + 7]!;
    const after = Math.max(0, before + delta);
    i32[(n << 3) + 7] = after;
    if (before === 0 && after > 0) this.pinned++;
    else if (before > 0 && after === 0) this.pinned--;
  }

  /**
   * `find(key)`, trying node `hint` first. Exact, not a guess: a key is held by at most one live node,
   * a removed node's key is NaN (`remove`), and nodes at or past `used` were never handed out — so a
   * node below `used` whose key equals `key` is the one `find` would return.
   */
  private findHinted(key: BlockKey, hint: number): number {
    if (hint >= 0 && hint < this.used && this.f64[hint << 2] === key) return hint;
    return this.find(key);
  }

  /** The per-set scratch of a chain walk's nodes, at least `count` long (grown by doubling, never shrunk). */
  private chainScratch(count: number): Int32Array {
    if (this.chainNodes.length < count) {
      const grown = new Int32Array(Math.max(count, this.chainNodes.length * 2));
      grown.fill(NIL);
      grown.set(this.chainNodes);
      this.chainNodes = grown;
    }
    return this.chainNodes;
  }

  /** Pin count of `key` (0 when absent). */
  pinsOf(key: BlockKey): number {
    const n = this.find(key);
    return n === NIL ? 0 : this.i32[(n << 3) + 7]!;
  }

  /** Evicts least recent entries until at most `limit` remain, sparing pinned ones while it can. */
  private makeRoom(limit: number): void {
    let spared = 0;
    while (this.count > limit) {
      const t = this.tail;
      if (this.i32[(t << 3) + 7]! > 0 && this.pinned < this.count && spared < MAX_SPARED) {
        spared++;
        this.unlink(t);
        this.pushHead(t);
        this.f64[(t << 2) + 1] = this.clock++;
        continue;
      }
      this.remove(t);
      spared = 0;
    }
  }

  /** Entries the set may hold now. */
  private room(): number {
    return Math.max(1, this.cap - this.held);
  }

  /** Evicts every entry with stamp ≤ `stamp` (all at least that old). Returns how many. */
  evictThrough(stamp: number): number {
    let evicted = 0;
    while (this.tail !== NIL && this.f64[(this.tail << 2) + 1]! <= stamp) {
      this.remove(this.tail);
      evicted++;
    }
    return evicted;
  }

  /** Removes `key` only if nothing touched it since it got `stamp`. */
  removeIfStamp(key: BlockKey, stamp: number): boolean {
    const n = this.find(key);
    if (n === NIL || this.f64[(n << 2) + 1] !== stamp) return false;
    this.remove(n);
    return true;
  }

  /** Changes the capacity (a backend's KV size was reconfigured); evicts the least recent to fit. */
  setCapacity(capacityBlocks: number): void {
    if (!Number.isInteger(capacityBlocks) || capacityBlocks < 1)
      throw new RangeError(`capacityBlocks must be a positive integer, got ${capacityBlocks}`);
    this.cap = capacityBlocks;
    // The same eviction every other shrink uses (it counts the reservation and spares pinned entries), so
    // the rebuild below re-inserts no more than fits and never evicts half-way through.
    this.makeRoom(this.room());
    if (this.slots > capacityBlocks) this.compact(Math.max(this.count, Math.min(capacityBlocks, MIN_SLOTS)));
  }

  private bucketOf(key: BlockKey): number {
    const h = (key >>> 0) ^ ((key / TWO_POW_32) >>> 0);
    return Math.imul(h, 0x9e3779b1) >>> this.shift;
  }

  private find(key: BlockKey): number {
    let n = this.buckets[this.bucketOf(key)]!;
    while (n !== NIL && this.f64[n << 2] !== key) n = this.i32[(n << 3) + 6]!;
    return n;
  }

  private insert(key: BlockKey): number {
    this.makeRoom(this.room() - 1);
    let n: number;
    if (this.freeHead !== NIL) {
      n = this.freeHead;
      this.freeHead = this.i32[(n << 3) + 6]!;
    } else {
      if (this.used === this.slots) this.allocate(Math.min(this.cap, this.slots * 2));
      n = this.used++;
    }
    this.f64[n << 2] = key;
    this.i32[(n << 3) + 7] = 0;
    this.count++;
    if (Number.isNaN(key)) {
      this.anon++;
      this.i32[(n << 3) + 6] = NIL;
      return n;
    }
    const b = this.bucketOf(key);
    this.i32[(n << 3) + 6] = this.buckets[b]!;
    this.buckets[b] = n;
    return n;
  }

  /** Unlinks from the LRU list and the hash chain; the node goes to the free list. */
  private remove(n: number): void {
    this.unlink(n);
    const i32 = this.i32;
    const key = this.f64[n << 2]!;
    if (i32[(n << 3) + 7]! > 0) this.pinned--;
    if (Number.isNaN(key)) this.anon--;
    else {
      const b = this.bucketOf(key);
      const after = i32[(n << 3) + 6]!;
      let p = this.buckets[b]!;
      if (p === n) this.buckets[b] = after;
      else {
        while (i32[(p << 3) + 6] !== n) p = i32[(p << 3) + 6]!;
        i32[(p << 3) + 6] = after;
      }
    }
    i32[(n << 3) + 6] = this.freeHead;
    this.freeHead = n;
    // A free node holds no key: findHinted relies on it.
    this.f64[n << 2] = Number.NaN;
    this.count--;
  }

  private unlink(n: number): void {
    const i32 = this.i32;
    const p = i32[(n << 3) + 4]!;
    const x = i32[(n << 3) + 5]!;
    if (p === NIL) this.head = x;
    else i32[(p << 3) + 5] = x;
    if (x === NIL) this.tail = p;
    else i32[(x << 3) + 4] = p;
  }

  private pushHead(n: number): void {
    const i32 = this.i32;
    i32[(n << 3) + 4] = NIL;
    i32[(n << 3) + 5] = this.head;
    if (this.head !== NIL) i32[(this.head << 3) + 4] = n;
    this.head = n;
    if (this.tail === NIL) this.tail = n;
  }

  /** Grows the pool to `slots` nodes; node numbers are kept, so only the buckets are rebuilt. */
  private allocate(slots: number): void {
    const buffer = new ArrayBuffer(slots * RECORD_BYTES);
    new Uint8Array(buffer).set(
      new Uint8Array(this.f64.buffer, 0, Math.min(this.f64.byteLength, buffer.byteLength)),
    );
    this.f64 = new Float64Array(buffer);
    this.i32 = new Int32Array(buffer);
    this.slots = slots;
    const nb = nextPow2(slots);
    if (nb !== this.buckets.length) {
      this.buckets = new Int32Array(nb).fill(NIL);
      this.shift = 32 - Math.log2(nb);
      for (let n = this.tail; n !== NIL; n = this.i32[(n << 3) + 4]!) {
        if (Number.isNaN(this.f64[n << 2]!)) continue;
        const b = this.bucketOf(this.f64[n << 2]!);
        this.i32[(n << 3) + 6] = this.buckets[b]!;
        this.buckets[b] = n;
      }
    }
  }

  /** Rebuilds into `slots` nodes, renumbering from the LRU tail so stamps and order are kept. */
  private compact(slots: number): void {
    const keys: number[] = [];
    const stamps: number[] = [];
    const pins: number[] = [];
    for (let n = this.tail; n !== NIL; n = this.i32[(n << 3) + 4]!) {
      keys.push(this.f64[n << 2]!);
      stamps.push(this.f64[(n << 2) + 1]!);
      pins.push(this.i32[(n << 3) + 7]!);
    }
    this.f64 = new Float64Array(0);
    this.i32 = new Int32Array(0);
    this.buckets = new Int32Array(0);
    this.used = 0;
    this.count = 0;
    this.anon = 0;
    this.pinned = 0;
    this.head = NIL;
    this.tail = NIL;
    this.freeHead = NIL;
    this.slots = 0;
    this.allocate(slots);
    for (let i = 0; i < keys.length; i++) {
      const n = this.insert(keys[i]!);
      this.pushHead(n);
      this.f64[(n << 2) + 1] = stamps[i]!;
      this.i32[(n << 3) + 7] = pins[i]!;
      if (pins[i]! > 0) this.pinned++;
    }
  }
}
