import { describe, expect, it } from "vitest";
import { encodeO200k } from "../../src/prefix/tokenizer";
import { chatPromptTokens, emulatorTokenizer, encodeText } from "./prompt-tokens";

/** The work the emulator's tokenizer does during `fn`. */
function workOf(fn: () => void): { chars: number; mergedBytes: number } {
  const w = emulatorTokenizer().work;
  const before = { chars: w.chars, mergedBytes: w.mergedBytes };
  fn();
  return { chars: w.chars - before.chars, mergedBytes: w.mergedBytes - before.mergedBytes };
}

describe("emulator prompt tokens", () => {
  it("reuses a long piece's tokens, and they are exactly the shared encoder's", () => {
    const w = emulatorTokenizer().work;
    const hits = w.memoHits;
    for (const text of [
      `user: ${" ".repeat(60_000)}\n`,
      `${"a".repeat(9_000)} and then ${"a".repeat(9_000)}b`,
      `${"长".repeat(5_000)}。${"😀".repeat(3_000)}`,
      `${"=".repeat(4_100)}\n${"\\".repeat(5_000)} ${" ".repeat(2_500)}x`,
    ])
      expect(emulatorTokenizer().encode(text).tokens).toEqual(encodeO200k(text).tokens);
    expect(w.memoHits - hits).toBeGreaterThan(50);
  });

  it("merges a 3.5 M-space message's identical pieces once, not 3,400 times", () => {
    let count = 0;
    const w = workOf(() => {
      // A role of its own: no other test's prompt in the text memo (test files may share the module).
      const r = chatPromptTokens([{ role: "spaces-test", content: " ".repeat(3_500_000) }], 131_072);
      expect(r.complete).toBe(true);
      count = r.tokens.length;
    });
    expect(count).toBeGreaterThan(20_000);
    expect(w.chars).toBe(3_500_014);
    // Each distinct long piece is merged once: a few KiB, where 3.5 MB of merging froze the fuzz driver.
    expect(w.mergedBytes).toBeLessThan(64 * 1024);
  });

  it("stops encoding just past the limit: a prompt the engine refuses costs a context's worth of text", () => {
    const text = "The quick brown fox jumps over the lazy dog. ".repeat(40_000); // ~1.8 M chars, ~400k tokens
    const w = workOf(() => {
      const r = encodeText(text, 1_000);
      expect(r.complete).toBe(false);
      expect(r.tokens.length).toBeGreaterThan(1_000);
      expect(r.tokens).toEqual(encodeO200k(text, 1_001).tokens);
    });
    expect(w.chars).toBeLessThan(10_000);
    // A chat's limit spans its messages.
    const chat = chatPromptTokens(
      [
        { role: "system", content: text.slice(0, 4_000) },
        { role: "user", content: text },
      ],
      1_000,
    );
    expect(chat.complete).toBe(false);
    expect(chat.tokens.length).toBeGreaterThan(1_000);
    expect(chat.tokens.length).toBeLessThan(1_100);
    // Under the limit: the whole prompt, complete.
    expect(chatPromptTokens([{ role: "user", content: "hello" }], 1_000)).toEqual({
      tokens: encodeO200k("user: hello\n").tokens,
      complete: true,
    });
  });
});
