/**
 * Byte-pair merging of one pre-tokenized piece, with tiktoken's rule: while
 * some adjacent pair of parts is itself a token, merge the pair with the
 * lowest rank, the leftmost one on ties. js-tiktoken does this by rescanning
 * every pair after every merge (quadratic, with a string key per lookup);
 * the results here are the same, computed two ways:
 *
 * - short pieces (almost all of them: words, numbers, punctuation): a
 *   rescan over cached pair ranks, recomputing only the two pairs a merge
 *   touches — the shape of tiktoken's Rust `_byte_pair_merge`;
 * - long pieces (a paragraph of CJK text with no spaces is one piece; so is
 *   a run of "=" or emoji): a min-heap of (rank, position) with stale entries
 *   skipped, O(n log n). The heap pops the lowest rank and, among equal
 *   ranks, the lowest start position — exactly the pair the rescan picks —
 *   so both paths produce identical tokens. Without it a 6 KB CJK piece
 *   costs ~18M pair lookups: a request could burn the Worker's CPU budget.
 */
import type { BpeVocab } from "./tokenizer-vocab";

/** Pieces up to this many bytes use the rescan; longer ones the heap. */
export const SMALL_PIECE_BYTES = 64;

const NO_RANK = 0x7fffffff;

// Scratch for the rescan path, reused across calls (single-threaded isolate).
const starts = new Int32Array(SMALL_PIECE_BYTES + 1);
const pairRanks = new Int32Array(SMALL_PIECE_BYTES);

function pairRank(vocab: BpeVocab, bytes: Uint8Array, a: number, b: number): number {
  const r = vocab.rankOf(bytes, a, b);
  return r < 0 ? NO_RANK : r;
}

/**
 * Appends the tokens of bytes[0, len) to `out`. The caller has already tried
 * the whole piece as one token.
 */
export function bytePairEncode(vocab: BpeVocab, bytes: Uint8Array, len: number, out: number[]): void {
  if (len > SMALL_PIECE_BYTES) {
    mergeWithHeap(vocab, bytes, len, out);
    return;
  }
  let m = len; // number of parts; part i is bytes[starts[i], starts[i + 1])
  for (let i = 0; i <= len; i++) starts[i] = i;
  for (let i = 0; i + 1 < m; i++) pairRanks[i] = pairRank(vocab, bytes, i, i + 2);
  while (m > 1) {
    let best = NO_RANK;
    let at = -1;
    for (let i = 0; i + 1 < m; i++) {
      const r = pairRanks[i]!;
      if (r < best) {
        best = r;
        at = i;
      }
    }
    if (at < 0) break;
    // Merge parts `at` and `at + 1`: drop starts[at + 1] and pairRanks[at + 1].
    starts.copyWithin(at + 1, at + 2, m + 1);
    pairRanks.copyWithin(at + 1, at + 2, m - 1);
    m--;
    if (at + 1 < m) pairRanks[at] = pairRank(vocab, bytes, starts[at]!, starts[at + 2]!);
    if (at > 0) pairRanks[at - 1] = pairRank(vocab, bytes, starts[at - 1]!, starts[at + 1]!);
  }
  for (let i = 0; i < m; i++) {
    const r = vocab.rankOf(bytes, starts[i]!, starts[i + 1]!);
    if (r >= 0) out.push(r); // js-tiktoken drops parts without a rank; o200k has all 256 bytes
  }
}

/** Min-heap of pair entries; the key orders by rank, then by the pair's start position. */
class PairHeap {
  private ids: Int32Array;
  private keys: Float64Array;
  private n = 0;

  constructor(capacity: number) {
    this.ids = new Int32Array(capacity);
    this.keys = new Float64Array(capacity);
  }

  get size(): number {
    return this.n;
  }

  push(key: number, id: number): void {
    if (this.n === this.ids.length) {
      const ids = new Int32Array(this.n * 2);
      ids.set(this.ids);
      this.ids = ids;
      const keys = new Float64Array(this.n * 2);
      keys.set(this.keys);
      this.keys = keys;
    }
    let i = this.n++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.keys[p]! <= key) break;
      this.keys[i] = this.keys[p]!;
      this.ids[i] = this.ids[p]!;
      i = p;
    }
    this.keys[i] = key;
    this.ids[i] = id;
  }

  /** Removes and returns the id with the smallest key. */
  pop(): number {
    const top = this.ids[0]!;
    const n = --this.n;
    const key = this.keys[n]!;
    const id = this.ids[n]!;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && this.keys[c + 1]! < this.keys[c]!) c++;
      if (this.keys[c]! >= key) break;
      this.keys[i] = this.keys[c]!;
      this.ids[i] = this.ids[c]!;
      i = c;
    }
    this.keys[i] = key;
    this.ids[i] = id;
    return top;
  }
}

const TWO_POW_32 = 0x100000000;

function mergeWithHeap(vocab: BpeVocab, bytes: Uint8Array, len: number, out: number[]): void {
  // Parts are identified by their start byte: endOf[s] is the part's end, -1 once merged away.
  const endOf = new Int32Array(len + 1);
  const prevOf = new Int32Array(len + 1);
  for (let i = 0; i < len; i++) {
    endOf[i] = i + 1;
    prevOf[i] = i - 1;
  }
  // Entry e describes the pair (left[e], mid[e]) + (mid[e], right[e]) as it was when pushed.
  let cap = len * 3;
  let left = new Int32Array(cap);
  let mid = new Int32Array(cap);
  let right = new Int32Array(cap);
  let entries = 0;
  const heap = new PairHeap(len);
  const add = (a: number, b: number, c: number): void => {
    const r = vocab.rankOf(bytes, a, c);
    if (r < 0) return;
    if (entries === cap) {
      cap *= 2;
      const l2 = new Int32Array(cap);
      l2.set(left);
      left = l2;
      const m2 = new Int32Array(cap);
      m2.set(mid);
      mid = m2;
      const r2 = new Int32Array(cap);
      r2.set(right);
      right = r2;
    }
    left[entries] = a;
    mid[entries] = b;
    right[entries] = c;
    heap.push(r * TWO_POW_32 + a, entries++);
  };
  for (let i = 0; i + 1 < len; i++) add(i, i + 1, i + 2);
  while (heap.size > 0) {
    const e = heap.pop();
    const a = left[e]!;
    const b = mid[e]!;
    const c = right[e]!;
    if (endOf[a] !== b || endOf[b] !== c) continue; // stale: one side has merged since
    endOf[a] = c;
    endOf[b] = -1;
    if (c < len) prevOf[c] = a;
    if (a > 0) add(prevOf[a]!, a, c);
    if (c < len) add(a, c, endOf[c]!);
  }
  for (let s = 0; s < len; s = endOf[s]!) {
    const r = vocab.rankOf(bytes, s, endOf[s]!);
    if (r >= 0) out.push(r);
  }
}
