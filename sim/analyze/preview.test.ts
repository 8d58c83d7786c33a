import { describe, expect, it } from "vitest";
import { redactedPreview } from "./preview";

describe("redactedPreview", () => {
  it("keeps a few words from each end and elides the middle", () => {
    const text = "system\nYou are a SQL assistant. Given the schema below, write one query and explain it.";
    expect(redactedPreview(text)).toBe("system You are a … query and explain it.");
  });

  it("never shows more than half of the words, and nothing of a text under four words", () => {
    for (let n = 0; n < 40; n++) {
      const words = Array.from({ length: n }, (_, i) => `w${i}`);
      const shown = redactedPreview(words.join(" "))
        .split(" ")
        .filter((w) => w !== "…");
      expect(shown.length * 2).toBeLessThanOrEqual(n);
      expect(shown.length).toBeLessThanOrEqual(8);
    }
    expect(redactedPreview("three short words")).toBe("…");
  });

  it("cuts long words and drops control characters", () => {
    const text = `${"a".repeat(40)}\u0007 b c d e f g ${"z".repeat(30)}`;
    expect(redactedPreview(text)).toBe(`${"a".repeat(15)}… b … g ${"z".repeat(15)}…`);
  });
});
