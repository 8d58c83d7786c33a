/**
 * Keying cost is bounded by prefixTokens whatever the request: at most
 * MAX_KEYED_CHARS_PER_TOKEN × prefixTokens characters read by the
 * tokenizer (plus one piece), at most prefixTokens segments keyed, nothing
 * rendered or fingerprinted past the cap — and the rest is still counted.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ChatBody,
  clearPrefixMemo,
  MAX_KEYED_CHARS_PER_TOKEN,
  type PrefixKeys,
  prefixKeysForRequest,
} from "../../src/prefix/request-keys";
import { o200kTokenizer } from "../../src/prefix/tokenizer";
import { prose } from "./tokenizer-corpus";

const opts = { model: "m", blockTokens: 16, prefixTokens: 1024 };
const BUDGET = opts.prefixTokens * MAX_KEYED_CHARS_PER_TOKEN;

/** Keys of a chat body, and the characters the tokenizer really read for it (memo hits read none). */
function keyed(body: ChatBody, o: Partial<typeof opts> = {}): PrefixKeys & { read: number } {
  const t = o200kTokenizer();
  const before = t.work.chars;
  const r = prefixKeysForRequest("chat", body, { ...opts, ...o });
  return { ...r, read: t.work.chars - before };
}

const user = (content: ChatBody["messages"][number]["content"]): ChatBody => ({
  messages: [{ role: "user", content }],
});

describe("keying budget", () => {
  it("stops after MAX_KEYED_CHARS_PER_TOKEN × prefixTokens characters of long-token text, and estimates the rest", () => {
    for (const unit of [" ", "=", "a", "\uD800", "长", "😀"]) {
      clearPrefixMemo();
      const text = unit.repeat(Math.ceil(3_000_000 / unit.length));
      const r = keyed(user(text));
      expect(r.read, JSON.stringify(unit)).toBeLessThanOrEqual(BUDGET + o200kTokenizer().lookahead);
      expect(r.keyed.chars).toBe(r.read);
      expect(r.keyed.tokens).toBeLessThanOrEqual(opts.prefixTokens);
      // The untokenized rest counts chars/4.
      expect(r.promptTokens).toBeGreaterThanOrEqual(Math.floor((text.length - r.keyed.chars) / 4));
    }
  });

  it("leaves ordinary text to the token cap: the character budget does not bind on prose", () => {
    const r = keyed(user(prose(3, 20_000)));
    expect(r.keyed.tokens).toBe(opts.prefixTokens);
    expect(r.keyed.chars).toBeLessThan(BUDGET / 1.5);
  });

  it("spends one budget across all segments of the request", () => {
    clearPrefixMemo();
    const messages = Array.from({ length: 200 }, (_, i) => ({
      role: i % 2 === 0 ? "user" : "assistant",
      content: " ".repeat(20_000) + String(i),
    }));
    const r = keyed({ messages });
    expect(r.read).toBeLessThanOrEqual(BUDGET + o200kTokenizer().lookahead);
    expect(r.keyed.segments).toBeLessThanOrEqual(opts.prefixTokens);
    expect(r.promptTokens).toBeGreaterThan((200 * 20_000 - r.keyed.chars) / 4);
  });

  it("keys at most prefixTokens segments of a million content parts, and counts them all", () => {
    const parts = Array.from({ length: 1_000_000 }, () => ({ type: "text", text: "ab" }));
    const r = keyed(user(parts));
    expect(r.keyed.segments).toBeLessThanOrEqual(opts.prefixTokens);
    expect(r.keyed.tokens).toBe(opts.prefixTokens);
    expect(r.promptTokens).toBeGreaterThanOrEqual(1_000_000);
    const media = Array.from({ length: 300_000 }, (_, i) => ({ type: "x-custom", v: [i] }));
    const m = keyed(user(media));
    expect(m.keyed.segments).toBeLessThanOrEqual(Math.ceil(opts.prefixTokens / 3) + 1);
    expect(m.promptTokens).toBe(300_000 * 3 + 2); // 3 ids per part, counted past the cap too; + role, end
  });

  it("reads no more of a huge tool schema than the budget, and keys it like the whole schema", () => {
    const tool = (tail: string, head = "f") => ({
      type: "function",
      function: { name: head, parameters: { enum: [...Array.from({ length: 500_000 }, () => 12345), tail] } },
    });
    const body = (t: unknown): ChatBody => ({ messages: [{ role: "user", content: "hi" }], tools: [t] });
    const a = keyed(body(tool("end-a")));
    const b = keyed(body(tool("end-b")));
    const other = keyed(body(tool("end-a", "g")));
    expect(a.read).toBeLessThanOrEqual(BUDGET + o200kTokenizer().lookahead);
    expect(b.blocks).toEqual(a.blocks); // they differ only far past the keyed prefix
    expect(other.blocks[0]).not.toEqual(a.blocks[0]); // the schema is keyed from its start
    expect(a.promptTokens).toBeGreaterThan((500_000 * 6) / 4);
  });

  it("keys two prompts sharing their first K characters alike, as far as K − lookahead and the cap allow", () => {
    const units = ["a", " ", "=", "长", "😀", "\uD800", "\n", "Ab", "'s", "0"];
    const piece = fc.oneof(
      fc.lorem({ maxCount: 40 }),
      fc.tuple(fc.constantFrom(...units), fc.integer({ min: 1, max: 6000 })).map(([u, n]) => u.repeat(n)),
    );
    const t = o200kTokenizer();
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 6 }).map((ps) => ps.join("")),
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        fc.constantFrom(64, 1024),
        (common, s1, s2, prefixTokens) => {
          fc.pre(s1 !== s2);
          const o = { prefixTokens };
          const a = keyed(user(common + s1), o);
          const b = keyed(user(common + s2), o);
          // Pieces that end before K − lookahead are the same in both texts (+1: the role marker).
          const sure =
            1 + t.encode(common, Number.POSITIVE_INFINITY, common.length - t.lookahead).tokens.length;
          const sharedTokens = Math.min(a.keyed.tokens, sure);
          let shared = 0;
          while (shared < a.blocks.length && a.blocks[shared] === b.blocks[shared]) shared++;
          expect(shared).toBeGreaterThanOrEqual(Math.floor(sharedTokens / opts.blockTokens));
        },
      ),
      { seed: 0x9e3779b9, numRuns: 60 },
    );
  });

  it("gives the same keys with a cold memo and a warm one, for hostile texts too", () => {
    const bodies: ChatBody[] = [
      user(" ".repeat(400_000)),
      user("=".repeat(100_000) + prose(1, 2000)),
      {
        messages: [
          { role: "system", content: "a".repeat(70_000) },
          { role: "user", content: prose(2, 300) },
        ],
      },
      {
        messages: [
          { role: "system", content: prose(4, 5000) },
          { role: "user", content: " ".repeat(9000) },
        ],
      },
    ];
    for (const prefixTokens of [64, 1024]) {
      for (const body of bodies) {
        clearPrefixMemo();
        const cold = keyed(body, { prefixTokens }).blocks;
        // Warm the memo with the same texts under a larger budget, then key again.
        keyed(body, { prefixTokens: 8192 });
        expect(keyed(body, { prefixTokens }).blocks).toEqual(cold);
      }
    }
  });
});
