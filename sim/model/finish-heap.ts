/**
 * Binary min-heap of decoding requests by the decode-step count at which they
 * finish (ties by admission order, so runs are deterministic). The engine
 * keeps one global step counter, so a request's finish never moves once it
 * starts decoding: no re-keying, only push, pop and peek.
 */

export interface HeapItem {
  /** Global decode-step count at which the item finishes. */
  finishStep: number;
  /** Admission order: the tie-break. */
  readonly seq: number;
}

function less(a: HeapItem, b: HeapItem): boolean {
  return a.finishStep < b.finishStep || (a.finishStep === b.finishStep && a.seq < b.seq);
}

export class FinishHeap<T extends HeapItem> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  /** Removes one item (an abort). O(n) to find it; aborts are rare. */
  remove(item: T): boolean {
    const a = this.items;
    const i = a.indexOf(item);
    if (i < 0) return false;
    const last = a.pop()!;
    if (i < a.length) {
      a[i] = last;
      this.siftDown(i);
      let j = i;
      while (j > 0) {
        const p = (j - 1) >> 1;
        if (!less(a[j]!, a[p]!)) break;
        [a[j], a[p]] = [a[p]!, a[j]!];
        j = p;
      }
    }
    return true;
  }

  private siftDown(i: number): void {
    const a = this.items;
    const n = a.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && less(a[l]!, a[m]!)) m = l;
      if (r < n && less(a[r]!, a[m]!)) m = r;
      if (m === i) return;
      [a[i], a[m]] = [a[m]!, a[i]!];
      i = m;
    }
  }
}
