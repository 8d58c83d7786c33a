/**
 * The paged KV cache of one engine, as vLLM V1's block pool keeps it
 * (vllm/v1/core/block_pool.py, kv_cache_manager.py):
 *
 * - a fixed number of blocks, each with a reference count;
 * - blocks whose count is 0 sit in a free queue (oldest use at the head);
 *   a free block may still hold a cached prefix block, findable by key;
 * - allocation pops the head of the free queue, evicting whatever key it held
 *   (so cached blocks go in least-recently-freed order: LRU);
 * - a cache hit on a block in the free queue takes it out (pins it);
 * - a request releases its blocks tail first, so the tail of a prompt is
 *   evicted before its head (vLLM frees `reversed(blocks)` for this reason:
 *   the shared head of a prompt is the part most likely to be reused).
 *
 * Slots live in typed arrays and the free queue is an intrusive doubly linked
 * list, so every operation is O(1) per block and allocation-free; the only
 * hashing is the key → slot map.
 */
import { KeyMap } from "./key-map";

const NIL = -1;

export class BlockPool {
  readonly numBlocks: number;
  private readonly refs: Int32Array;
  private readonly prev: Int32Array;
  private readonly next: Int32Array;
  /** The key a slot is cached under; NaN when the slot holds no reusable block. */
  private readonly keys: Float64Array;
  private readonly byKey: KeyMap;
  private head = NIL;
  private tail = NIL;
  private free = 0;

  constructor(numBlocks: number) {
    if (!Number.isInteger(numBlocks) || numBlocks < 1)
      throw new RangeError(`numBlocks must be a positive integer, got ${numBlocks}`);
    this.numBlocks = numBlocks;
    this.refs = new Int32Array(numBlocks);
    this.prev = new Int32Array(numBlocks);
    this.next = new Int32Array(numBlocks);
    this.keys = new Float64Array(numBlocks).fill(Number.NaN);
    this.byKey = new KeyMap(numBlocks);
    for (let s = 0; s < numBlocks; s++) this.pushTail(s);
  }

  /**
   * Makes this pool an exact copy of `src` (same block count), reusing this
   * pool's arrays: a what-if copy (sim/clairvoyant.ts) costs a few memcpy,
   * no allocation.
   */
  copyFrom(src: BlockPool): void {
    if (src.numBlocks !== this.numBlocks) throw new RangeError("BlockPool.copyFrom: block counts differ");
    this.refs.set(src.refs);
    this.prev.set(src.prev);
    this.next.set(src.next);
    this.keys.set(src.keys);
    this.byKey.copyFrom(src.byKey);
    this.head = src.head;
    this.tail = src.tail;
    this.free = src.free;
    this.lastMatchFree = src.lastMatchFree;
  }

  /** Blocks in the free queue: never used, or cached but not referenced by any request. */
  get numFree(): number {
    return this.free;
  }

  /** Blocks currently holding a reusable (keyed) block, referenced or not. */
  get numCached(): number {
    return this.byKey.size;
  }

  /** Longest run of leading keys present in the cache, at most `limit`. Read-only: no LRU touch. */
  longestPrefix(keys: readonly number[], limit: number = keys.length): number {
    const n = Math.min(limit, keys.length);
    let i = 0;
    while (i < n && this.byKey.get(keys[i]!) !== NIL) i++;
    return i;
  }

  /**
   * Looks up the longest cached run of leading keys (at most `limit`) and
   * writes their slots to out[0..hit); returns hit. Read-only: nothing is
   * pinned or touched until pinSlots(). `lastMatchFree` is then the number of
   * those slots that sit unreferenced in the free queue (pinning them takes
   * them out, so they do not count as free room for the rest).
   */
  match(keys: readonly number[], limit: number, out: Int32Array): number {
    const n = Math.min(limit, keys.length);
    let free = 0;
    let i = 0;
    for (; i < n; i++) {
      const s = this.byKey.get(keys[i]!);
      if (s < 0) break;
      if (this.refs[s] === 0) free++;
      out[i] = s;
    }
    this.lastMatchFree = free;
    return i;
  }

  /** Free-queue slots among the last match() result. */
  lastMatchFree = 0;

  /** References slots[0..n) (a match() result), taking unreferenced ones out of the free queue. */
  pinSlots(slots: Int32Array, n: number): void {
    for (let i = 0; i < n; i++) {
      const s = slots[i]!;
      if (this.refs[s] === 0) this.unlink(s);
      this.refs[s]!++;
    }
  }

  /**
   * Takes `count` blocks from the head of the free queue into out[from..from+count),
   * evicting the cached keys they held. The caller checked numFree.
   */
  allocate(count: number, out: Int32Array, from: number): void {
    if (count > this.free) throw new RangeError(`allocate ${count} blocks with ${this.free} free`);
    for (let i = 0; i < count; i++) {
      const s = this.head;
      this.unlink(s);
      const k = this.keys[s]!;
      if (!Number.isNaN(k)) {
        this.byKey.delete(k);
        this.keys[s] = Number.NaN;
      }
      this.refs[s] = 1;
      out[from + i] = s;
    }
  }

  /**
   * Makes a computed, referenced block findable under `key`. Another block
   * may hold the key already: two requests computed the same prefix at once,
   * or a fully cached prompt recomputed its last block. vLLM then keeps both
   * copies under the hash, so the key lives as long as the copy freed last.
   * We keep one owner: the new block takes the key over from an unreferenced
   * copy (it will be freed later, so it outlives it); a copy still in use by
   * another request keeps it.
   */
  register(slot: number, key: number): void {
    const old = this.byKey.get(key);
    if (old < 0) {
      this.byKey.setIfAbsent(key, slot);
    } else {
      if (old === slot || this.refs[old] !== 0) return;
      this.byKey.replace(key, slot);
      this.keys[old] = Number.NaN;
    }
    this.keys[slot] = key;
  }

  /** Drops one reference from each of slots[0..n), tail first (the tail is then evicted first). */
  release(slots: Int32Array, n: number): void {
    for (let i = n - 1; i >= 0; i--) {
      const s = slots[i]!;
      const r = this.refs[s]! - 1;
      this.refs[s] = r;
      if (r === 0) this.pushTail(s);
    }
  }

  private pushTail(s: number): void {
    this.prev[s] = this.tail;
    this.next[s] = NIL;
    if (this.tail === NIL) this.head = s;
    else this.next[this.tail] = s;
    this.tail = s;
    this.free++;
  }

  private unlink(s: number): void {
    const p = this.prev[s]!;
    const n = this.next[s]!;
    if (p === NIL) this.head = n;
    else this.next[p] = n;
    if (n === NIL) this.tail = p;
    else this.prev[n] = p;
    this.free--;
  }
}
