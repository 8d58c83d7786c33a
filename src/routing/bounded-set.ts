/**
 * A set that holds at most `capacity` items, forgetting the least recently
 * added first: what a memory kept per isolate or per object needs so that it
 * never grows with traffic (the families an isolate was told of, the foreign
 * lease ends a RouterDO applied, the requests an isolate saw poison two
 * backends). Adding an item already held makes it the most recent. A JS Set
 * iterates in insertion order, so its first item is always the oldest.
 */
export class BoundedSet<T> {
  private readonly items = new Set<T>();

  constructor(readonly capacity: number) {}

  has(item: T): boolean {
    return this.items.has(item);
  }

  get size(): number {
    return this.items.size;
  }

  /** Holds `item` as the most recent; past capacity, the oldest is forgotten. */
  add(item: T): void {
    this.items.delete(item);
    this.items.add(item);
    if (this.items.size > this.capacity) this.items.delete(this.items.values().next().value as T);
  }
}
