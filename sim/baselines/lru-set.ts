/**
 * A fixed-capacity LRU set of block keys with an eviction callback, the shape
 * of hashicorp/golang-lru's `Cache.Add` as llm-d's prefix indexer uses it:
 * adding a present key refreshes it, adding past capacity evicts the least
 * recently added/refreshed key and reports it. A JS Map iterates in insertion
 * order, so its first key is always the least recently used one.
 */

import type { BlockKey } from "../../src/routing/types";

export class LruSet {
  private readonly entries = new Map<BlockKey, true>();

  constructor(
    readonly capacity: number,
    private readonly onEvict: (key: BlockKey) => void,
  ) {
    if (!(capacity >= 1)) throw new Error(`LruSet capacity must be >= 1, got ${capacity}`);
  }

  get size(): number {
    return this.entries.size;
  }

  has(key: BlockKey): boolean {
    return this.entries.has(key);
  }

  add(key: BlockKey): void {
    if (this.entries.has(key)) {
      this.entries.delete(key);
      this.entries.set(key, true);
      return;
    }
    this.entries.set(key, true);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as BlockKey;
      this.entries.delete(oldest);
      this.onEvict(oldest);
    }
  }

  /** Removes every key, reporting each (golang-lru Remove fires the callback too). */
  clear(): void {
    const keys = [...this.entries.keys()];
    this.entries.clear();
    for (const key of keys) this.onEvict(key);
  }
}
