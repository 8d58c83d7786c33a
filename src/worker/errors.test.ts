import { describe, expect, it } from "vitest";
import { quoteClient } from "./errors";
import { MAX_MODEL_CHARS } from "./request/request-limits";

describe("quoteClient", () => {
  it("quotes short input whole, and cuts long input at MAX_MODEL_CHARS, saying how long it was", () => {
    expect(quoteClient("llama-3")).toBe("llama-3");
    expect(quoteClient("a".repeat(MAX_MODEL_CHARS))).toBe("a".repeat(MAX_MODEL_CHARS));
    expect(quoteClient("a".repeat(9000))).toBe(`${"a".repeat(MAX_MODEL_CHARS)}… (9000 characters)`);
  });

  it("never cuts between the two halves of a surrogate pair", () => {
    const text = `${"a".repeat(MAX_MODEL_CHARS - 1)}😀${"a".repeat(100)}`;
    const quoted = quoteClient(text);
    expect(quoted.startsWith(`${"a".repeat(MAX_MODEL_CHARS - 1)}…`)).toBe(true);
    // No lone high surrogate left at the cut.
    expect(quoted).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });
});
