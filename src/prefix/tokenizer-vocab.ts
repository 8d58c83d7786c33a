/**
 * A BPE vocabulary as three typed arrays: every token's bytes packed end to
 * end (in rank order), their offsets, and an open-addressing hash table from
 * byte sequence to rank.
 *
 * Why not js-tiktoken's own constructor: it base64-decodes each of o200k's
 * 199,998 tokens into an array, joins the bytes into a "1,2,3" string key and
 * fills two Maps — ~2 s of CPU on a busy 2-core box (see
 * bench/results/cold-start.md), all of it before the first request can be
 * answered. Here the same js-tiktoken rank data (`bpe_ranks`, one line of
 * space-separated base64 tokens with consecutive ranks) is decoded in a single
 * pass with a hand-written base64 loop, and the table holds small integers
 * only: no per-token objects, strings or Map entries for the GC to trace.
 * Lookups hash the candidate bytes and compare them against the packed blob.
 *
 * Memory for o200k_base: ~1.4 MB of token bytes, 0.8 MB of offsets, 2 MB of
 * hash table (2^19 slots, load 0.38: linear probing stays ~1.3 probes/hit).
 */

/** js-tiktoken's rank file shape (`TiktokenBPE`), restated so callers need not import js-tiktoken's types. */
export interface BpeRanks {
  readonly pat_str: string;
  readonly special_tokens: Record<string, number>;
  readonly bpe_ranks: string;
}

const EMPTY = -1;

/** base64 alphabet → 6-bit value; -1 for anything else (space, "=", newline). */
const B64 = /* @__PURE__ */ (() => {
  const t = new Int8Array(128).fill(-1);
  const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (let i = 0; i < abc.length; i++) t[abc.charCodeAt(i)] = i;
  return t;
})();

/** FNV-1a over bytes[start, end), then MurmurHash3's finaliser so the low bits (the slot) are well mixed. */
export function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

export class BpeVocab {
  /** Token bytes, concatenated in rank order. */
  private readonly blob: Uint8Array;
  /** Token r occupies blob[offsets[r], offsets[r + 1]). */
  private readonly offsets: Uint32Array;
  /** Slot → rank, or EMPTY. Size is a power of two. */
  private readonly table: Int32Array;
  private readonly mask: number;
  /** Number of ranks (ordinary tokens, no specials). */
  readonly size: number;
  /** Longest token in bytes (128 for o200k): longer spans are rejected without hashing. */
  readonly maxBytes: number;

  /**
   * Decodes js-tiktoken's `bpe_ranks` text. Only the single-line,
   * consecutive-rank layout that js-tiktoken ships for o200k_base/cl100k_base
   * is accepted; anything else throws rather than silently mis-ranking.
   */
  constructor(bpeRanks: string) {
    const s = bpeRanks;
    const firstSpace = s.indexOf(" ");
    const secondSpace = s.indexOf(" ", firstSpace + 1);
    if (firstSpace < 0 || secondSpace < 0 || s.indexOf("\n") >= 0)
      throw new Error("unsupported bpe_ranks layout: expected one line '<tag> <offset> <base64>...'");
    if (Number.parseInt(s.slice(firstSpace + 1, secondSpace), 10) !== 0)
      throw new Error("unsupported bpe_ranks layout: ranks must start at 0");

    // Upper bounds: each 4 base64 chars give ≤ 3 bytes; each token needs ≥ 2 chars + a space.
    const blob = new Uint8Array(Math.ceil(((s.length - secondSpace) * 3) / 4));
    let offsets = new Uint32Array(Math.ceil((s.length - secondSpace) / 3) + 2);
    let n = 0;
    let w = 0;
    let acc = 0;
    let bits = 0;
    for (let i = secondSpace + 1; i <= s.length; i++) {
      const c = i < s.length ? s.charCodeAt(i) : 32;
      if (c === 32) {
        // End of one token: close it (padding "=" was skipped, leftover bits are padding).
        n++;
        offsets[n] = w;
        acc = 0;
        bits = 0;
        continue;
      }
      const v = c < 128 ? B64[c]! : -1;
      if (v < 0) continue; // "=" padding
      acc = (acc << 6) | v;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        blob[w++] = (acc >>> bits) & 0xff;
        acc &= (1 << bits) - 1;
      }
    }
    offsets = offsets.slice(0, n + 1);
    this.blob = blob.slice(0, w);
    this.offsets = offsets;
    this.size = n;

    let cap = 1;
    while (cap < n * 2.5) cap <<= 1;
    this.table = new Int32Array(cap).fill(EMPTY);
    this.mask = cap - 1;
    let maxBytes = 0;
    for (let r = 0; r < n; r++) {
      const a = offsets[r]!;
      const b = offsets[r + 1]!;
      if (b - a > maxBytes) maxBytes = b - a;
      let slot = hashBytes(this.blob, a, b) & this.mask;
      while (this.table[slot] !== EMPTY) slot = (slot + 1) & this.mask;
      this.table[slot] = r;
    }
    this.maxBytes = maxBytes;
  }

  /** The rank of bytes[start, end), or -1 when that byte sequence is not a token. */
  rankOf(bytes: Uint8Array, start: number, end: number): number {
    const len = end - start;
    if (len > this.maxBytes) return -1;
    const blob = this.blob;
    const offsets = this.offsets;
    const table = this.table;
    let slot = hashBytes(bytes, start, end) & this.mask;
    for (;;) {
      const r = table[slot]!;
      if (r === EMPTY) return -1;
      const a = offsets[r]!;
      if (offsets[r + 1]! - a === len) {
        let i = 0;
        while (i < len && blob[a + i] === bytes[start + i]) i++;
        if (i === len) return r;
      }
      slot = (slot + 1) & this.mask;
    }
  }

  /** Bytes of token `rank` (a view into the packed blob; do not mutate). */
  bytesOf(rank: number): Uint8Array {
    return this.blob.subarray(this.offsets[rank]!, this.offsets[rank + 1]!);
  }
}
