/**
 * Per-isolate memo of tokenized text, least recently used first out.
 *
 * A Worker isolate serves many requests; most of them repeat long texts
 * verbatim (the same 8k-token system prompt, the same tool schemas, the
 * conversation history of the previous turn). Tokenizing them once per
 * isolate leaves each request only its new text to tokenize.
 *
 * Memory bound (defaults): ≤ 512k tokens held (Uint32Array: ≤ 2 MB) and ≤ 2M
 * UTF-16 code units of keys (≤ 4 MB even for two-byte strings), ≤ 4096
 * entries — ≤ ~6.5 MB of a 128 MB isolate in the worst case. Texts shorter
 * than `minChars` are not stored: they cost microseconds to tokenize and
 * would only churn the LRU.
 *
 * An entry may hold only the leading tokens of its text (the caller asked for
 * at most N tokens or M characters); a later call that needs more
 * re-tokenizes and replaces it. An entry serves a call only when encoding
 * afresh would have given the same leading tokens: it holds at least the
 * tokens asked for (or all of them), and it stopped before the call's
 * character limit, which therefore could not have cut it shorter.
 *
 * Note on V8: strings longer than 16383 chars hash by length only, so long
 * keys of equal length share a bucket; Map then compares them, which stops at
 * the first differing character — cheap unless many equal-length long texts
 * share a long common start.
 */
import type { EncodedText } from "./tokenizer";

export interface MemoEntry {
  readonly tokens: Uint32Array;
  readonly charsConsumed: number;
  readonly complete: boolean;
}

export interface TokenMemoLimits {
  readonly maxEntries: number;
  readonly maxTokens: number;
  readonly maxChars: number;
  readonly minChars: number;
}

export const DEFAULT_MEMO_LIMITS: TokenMemoLimits = {
  maxEntries: 4096,
  maxTokens: 512 * 1024,
  maxChars: 2 * 1024 * 1024,
  minChars: 256,
};

export interface TokenMemoStats {
  hits: number;
  misses: number;
  /** Texts tokenized without the memo (shorter than minChars, or larger than the whole memo). */
  bypassed: number;
  evictions: number;
  readonly entries: number;
  readonly tokens: number;
  readonly chars: number;
}

export class TokenMemo {
  private readonly map = new Map<string, MemoEntry>();
  private tokens = 0;
  private chars = 0;
  private counters = { hits: 0, misses: 0, bypassed: 0, evictions: 0 };

  constructor(
    private readonly encode: (text: string, maxTokens: number, maxChars: number) => EncodedText,
    private readonly limits: TokenMemoLimits = DEFAULT_MEMO_LIMITS,
  ) {}

  /**
   * The leading tokens of `text` — encoding stopped at the first piece
   * boundary with at least `maxTokens` tokens or `maxChars` characters, or at
   * the end — from the memo when possible. A memo entry may hold more tokens
   * than asked for, never fewer.
   */
  get(text: string, maxTokens: number, maxChars: number = Number.POSITIVE_INFINITY): MemoEntry {
    if (text.length < this.limits.minChars || text.length > this.limits.maxChars) {
      this.counters.bypassed++;
      return toEntry(this.encode(text, maxTokens, maxChars));
    }
    const hit = this.map.get(text);
    if (
      hit !== undefined &&
      (hit.complete || hit.tokens.length >= maxTokens) &&
      hit.charsConsumed < maxChars
    ) {
      this.counters.hits++;
      // Refresh recency: Map iterates in insertion order, so re-insert at the end.
      this.map.delete(text);
      this.map.set(text, hit);
      return hit;
    }
    this.counters.misses++;
    const entry = toEntry(this.encode(text, maxTokens, maxChars));
    if (hit !== undefined) this.drop(text, hit);
    if (entry.tokens.length > this.limits.maxTokens) {
      this.counters.bypassed++;
      return entry;
    }
    this.map.set(text, entry);
    this.tokens += entry.tokens.length;
    this.chars += text.length;
    while (
      this.map.size > this.limits.maxEntries ||
      this.tokens > this.limits.maxTokens ||
      this.chars > this.limits.maxChars
    ) {
      const oldest = this.map.entries().next().value;
      if (oldest === undefined) break;
      this.drop(oldest[0], oldest[1]);
      this.counters.evictions++;
    }
    return entry;
  }

  stats(): TokenMemoStats {
    return { ...this.counters, entries: this.map.size, tokens: this.tokens, chars: this.chars };
  }

  clear(): void {
    this.map.clear();
    this.tokens = 0;
    this.chars = 0;
    this.counters = { hits: 0, misses: 0, bypassed: 0, evictions: 0 };
  }

  private drop(text: string, entry: MemoEntry): void {
    this.map.delete(text);
    this.tokens -= entry.tokens.length;
    this.chars -= text.length;
  }
}

function toEntry(e: EncodedText): MemoEntry {
  return { tokens: Uint32Array.from(e.tokens), charsConsumed: e.charsConsumed, complete: e.complete };
}
