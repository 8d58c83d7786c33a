import { describe, expect, it } from "vitest";
import type { EncodedText } from "../../src/prefix/tokenizer";
import { TokenMemo } from "../../src/prefix/tokenizer-memo";

/** A fake encoder: one token per character (its code), counting calls, honouring maxTokens. */
function counting(): { encode: (t: string, max: number) => EncodedText; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    encode(text, max) {
      calls.push(text);
      const n = Math.min(text.length, max);
      const tokens = Array.from({ length: n }, (_, i) => text.charCodeAt(i));
      return { tokens, charsConsumed: n, complete: n === text.length };
    },
  };
}

const limits = { maxEntries: 3, maxTokens: 100, maxChars: 1000, minChars: 4 };

describe("TokenMemo", () => {
  it("tokenizes a repeated text once", () => {
    const enc = counting();
    const memo = new TokenMemo(enc.encode, limits);
    const a = memo.get("system prompt", 50);
    const b = memo.get("system prompt", 50);
    expect(b).toBe(a);
    expect(enc.calls).toEqual(["system prompt"]);
    expect(memo.stats()).toMatchObject({ hits: 1, misses: 1, entries: 1, tokens: 13, chars: 13 });
  });

  it("does not store short texts", () => {
    const enc = counting();
    const memo = new TokenMemo(enc.encode, limits);
    memo.get("hi", 50);
    memo.get("hi", 50);
    expect(enc.calls).toEqual(["hi", "hi"]);
    expect(memo.stats()).toMatchObject({ bypassed: 2, entries: 0 });
  });

  it("re-tokenizes a partial entry when more tokens are needed, and reuses it when fewer are", () => {
    const enc = counting();
    const memo = new TokenMemo(enc.encode, limits);
    expect(memo.get("abcdefghij", 4).tokens.length).toBe(4);
    expect(memo.get("abcdefghij", 3).tokens.length).toBe(4); // hit: 4 ≥ 3
    const full = memo.get("abcdefghij", 100);
    expect(full.complete).toBe(true);
    expect(enc.calls.length).toBe(2);
    expect(memo.stats()).toMatchObject({ entries: 1, tokens: 10 });
  });

  it("evicts least recently used first, by entries, tokens and chars", () => {
    const enc = counting();
    const memo = new TokenMemo(enc.encode, limits);
    memo.get("aaaa", 100);
    memo.get("bbbb", 100);
    memo.get("cccc", 100);
    memo.get("aaaa", 100); // refresh a: b is now the oldest
    memo.get("dddd", 100); // 4 entries > 3: evict b
    expect(memo.stats()).toMatchObject({ entries: 3, evictions: 1 });
    enc.calls.length = 0;
    memo.get("aaaa", 100);
    memo.get("bbbb", 100);
    expect(enc.calls).toEqual(["bbbb"]);

    const big = new TokenMemo(counting().encode, limits);
    big.get("x".repeat(60), 100);
    big.get("y".repeat(60), 100); // 120 tokens > 100: evict the x's
    expect(big.stats()).toMatchObject({ entries: 1, tokens: 60, evictions: 1 });
  });

  it("never stores a text larger than the whole memo", () => {
    const memo = new TokenMemo(counting().encode, limits);
    const e = memo.get("z".repeat(500), 1000);
    expect(e.tokens.length).toBe(500);
    expect(memo.stats()).toMatchObject({ entries: 0, tokens: 0 });
  });
});
