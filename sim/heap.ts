/**
 * A binary min-heap under a strict order `less`, for the simulator's event
 * and eviction queues. Callers break ties inside `less` (an admission or
 * insertion sequence), so the order is total and every run pops alike.
 */
export class Heap<T> {
  private readonly items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  /** Replaces this heap's items by `src`'s, each mapped by `map` (same positions: the same order). */
  copyFrom(src: Heap<T>, map: (item: T) => T): void {
    this.items.length = 0;
    for (const item of src.items) this.items.push(map(item));
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    this.items.push(item);
    this.up(this.items.length - 1);
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      this.down(0);
    }
    return top;
  }

  /** Removes one item (found by identity); O(n) to find it, for rare removals such as aborts. */
  remove(item: T): boolean {
    const items = this.items;
    const i = items.indexOf(item);
    if (i < 0) return false;
    const last = items.pop()!;
    if (i < items.length) {
      items[i] = last;
      this.down(i);
      this.up(i);
    }
    return true;
  }

  private up(i: number): void {
    const a = this.items;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(a[i]!, a[p]!)) return;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }

  private down(i: number): void {
    const a = this.items;
    const n = a.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.less(a[l]!, a[m]!)) m = l;
      if (r < n && this.less(a[r]!, a[m]!)) m = r;
      if (m === i) return;
      [a[i], a[m]] = [a[m]!, a[i]!];
      i = m;
    }
  }
}
