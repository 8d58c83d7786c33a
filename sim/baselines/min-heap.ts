/**
 * Binary min-heap ordered by (priority, insertion sequence). The sequence
 * makes equal priorities pop in insertion order, so eviction order is
 * deterministic where the Rust original (std BinaryHeap) leaves it unspecified.
 */
export class MinHeap<T> {
  private readonly items: { priority: number; seq: number; value: T }[] = [];
  private nextSeq = 0;

  get size(): number {
    return this.items.length;
  }

  push(priority: number, value: T): void {
    const items = this.items;
    items.push({ priority, seq: this.nextSeq++, value });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    if (top === undefined) return undefined;
    const last = items.pop()!;
    if (items.length > 0) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && this.less(l, m)) m = l;
        if (r < items.length && this.less(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return top.value;
  }

  private less(a: number, b: number): boolean {
    const x = this.items[a]!;
    const y = this.items[b]!;
    return x.priority < y.priority || (x.priority === y.priority && x.seq < y.seq);
  }

  private swap(a: number, b: number): void {
    const items = this.items;
    const t = items[a]!;
    items[a] = items[b]!;
    items[b] = t;
  }
}
