/**
 * The tokenizer's bounds: no piece longer than MAX_PIECE_RUN code points per
 * repeated class, encoding stops at maxChars, work is proportional to what
 * was consumed (never to the length of the run it starts in), and a text
 * cut `lookahead` past the stop tokenizes the same.
 */
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { describe, expect, it } from "vitest";
import { MAX_PIECE_RUN, o200kTokenizer } from "../../src/prefix/tokenizer";
import { boundPattern } from "../../src/prefix/tokenizer-pattern";
import { prose } from "./tokenizer-corpus";

describe("boundPattern", () => {
  it("bounds every unbounded quantifier and leaves classes, escapes and bounded ones alone", () => {
    const b = boundPattern("[a-z+*]+\\p{L}*x{2,}y{1,3}z?\\s+(?!\\S)|\\++", 10);
    expect(b.source).toBe("[a-z+*]{1,10}\\p{L}{0,10}x{2,10}y{1,3}z?\\s{1,10}(?!\\S)|\\+{1,10}");
    // Widest alternative: 10 + 10 + 10 + 3 + 1 + 10 + 1 (lookahead) = 45.
    expect(b.maxWidth).toBe(45);
  });

  it("bounds o200k's pattern into a valid regex of the same alternatives", () => {
    const b = boundPattern(o200kBase.pat_str, 1024);
    expect(b.source).not.toMatch(/[^\\\]][*+](?![^[]*\])/);
    expect(() => new RegExp(b.source, "yu")).not.toThrow();
    expect(b.source.split("|").length).toBe(o200kBase.pat_str.split("|").length);
    expect(b.maxWidth).toBeGreaterThan(2 * 1024);
    expect(b.maxWidth).toBeLessThan(3 * 1024);
  });

  it("refuses what it cannot bound honestly", () => {
    expect(() => boundPattern("(a)\\1+", 8)).toThrow(/backreference/);
    expect(() => boundPattern("+a", 8)).toThrow(/quantifier/);
    expect(() => boundPattern("(a", 8)).toThrow(/unclosed/);
    expect(() => boundPattern("a", 0)).toThrow(RangeError);
  });
});

describe("bounded tokenization", () => {
  const t = o200kTokenizer();

  it("cuts a run longer than MAX_PIECE_RUN into pieces no longer than `lookahead`", () => {
    for (const unit of ["a", "A", " ", "=", "长", "😀", "\u0301", "\n"]) {
      const text = unit.repeat(6 * MAX_PIECE_RUN + 7);
      const pieces = t.work.pieces;
      const e = t.encode(text);
      expect(e.complete).toBe(true);
      expect(t.work.pieces - pieces, JSON.stringify(unit)).toBeGreaterThanOrEqual(3);
      // The first piece (pieces are merged independently, so encoding can stop after it).
      const first = t.encode(text, 1).charsConsumed;
      expect(first).toBeGreaterThanOrEqual(MAX_PIECE_RUN * unit.length - 1);
      expect(first).toBeLessThanOrEqual(t.lookahead);
    }
    expect(t.work.longestMergeBytes).toBeLessThanOrEqual(3 * t.lookahead);
  });

  it("does not overflow the stack on a multi-megabyte run (it used to, inside RegExp.exec)", () => {
    const e = t.encode("长".repeat(5_000_000), 8192);
    expect(e.tokens.length).toBeGreaterThanOrEqual(8192);
    expect(e.charsConsumed).toBeLessThan(8192 + 2 * MAX_PIECE_RUN);
  });

  it("stops at maxChars, reading at most one piece past it, whatever the run", () => {
    for (const unit of ["a", " ", "=", "长", "😀", "\uD800", "\t\n", "ab"]) {
      const text = unit.repeat(Math.ceil(2_000_000 / unit.length));
      for (const maxChars of [1, 100, 5000, 65_536]) {
        const before = t.work.chars;
        const e = t.encode(text, Number.POSITIVE_INFINITY, maxChars);
        const read = t.work.chars - before;
        expect(read).toBe(e.charsConsumed);
        expect(e.charsConsumed).toBeGreaterThanOrEqual(maxChars);
        expect(e.charsConsumed).toBeLessThanOrEqual(maxChars + t.lookahead);
      }
    }
  });

  it("gives the same tokens for a text cut `lookahead` past where encoding stops", () => {
    const texts = [
      prose(5, 3000),
      `${" ".repeat(5000)}x${"\n".repeat(3000)}`,
      "Ab".repeat(4000),
      "长".repeat(9000),
      `${"😀".repeat(3000)}!?`,
      "\n \n\t \r\n".repeat(2000),
    ];
    for (const text of texts) {
      for (const maxChars of [1, 700, 1500, 4000]) {
        const whole = t.encode(text, Number.POSITIVE_INFINITY, maxChars);
        const cut = t.encode(text.slice(0, maxChars + t.lookahead), Number.POSITIVE_INFINITY, maxChars);
        expect(cut.tokens).toEqual(whole.tokens);
        expect(cut.charsConsumed).toBe(whole.charsConsumed);
      }
    }
  });

  it("is prefix-stable: texts sharing their first K characters share tokens up to K − lookahead", () => {
    const common = `${prose(9, 400)}${"=".repeat(3000)}${prose(10, 200)}`;
    const a = t.encode(`${common} and then one ending`).tokens;
    const b = t.encode(`${common}${"z".repeat(5000)}`).tokens;
    const sharedPrefix = t.encode(common, Number.POSITIVE_INFINITY, common.length - t.lookahead);
    expect(a.slice(0, sharedPrefix.tokens.length)).toEqual(sharedPrefix.tokens);
    expect(b.slice(0, sharedPrefix.tokens.length)).toEqual(sharedPrefix.tokens);
  });
});
