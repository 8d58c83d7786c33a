import { describe, expect, it } from "vitest";
import { cutByWindow, expectedCachedTokens, WindowExtents } from "./window-extents";

describe("window-extents", () => {
  it("keeps, per backend, the last length computed past a window end", () => {
    const x = new WindowExtents();
    x.reset([4, 4]);
    x.note(0, 11, 40_000, 1);
    expect(x.extent(0, 11)).toBe(40_000);
    expect(x.extent(1, 11)).toBeUndefined();
    // The last prompt is what the backend computed last: a shorter one replaces a longer one.
    x.note(0, 11, 36_000, 1);
    expect(x.extent(0, 11)).toBe(36_000);
    // Nothing for an empty prompt or an unknown backend.
    x.note(0, 12, 0, 1);
    x.note(5, 12, 1000, 1);
    expect(x.extent(0, 12)).toBeUndefined();
    expect(x.extent(5, 12)).toBeUndefined();
  });

  it("holds at most the backend's capacity in blocks, dropping the least recently noted", () => {
    const x = new WindowExtents();
    // 32 tokens of KV: two 16-token blocks.
    x.reset([32]);
    x.note(0, 1, 100, 16);
    x.note(0, 2, 200, 16);
    x.note(0, 1, 150, 16); // 1 is now the most recent
    x.note(0, 3, 300, 16);
    expect(x.size(0)).toBe(2);
    expect(x.extent(0, 2)).toBeUndefined();
    expect(x.extent(0, 1)).toBe(150);
    expect(x.extent(0, 3)).toBe(300);
    expect(() => x.reset([0])).toThrow(RangeError);
  });

  it("bounds by the block size each note is made at: 8-token blocks keep twice as many", () => {
    const x = new WindowExtents();
    x.reset([32]);
    for (let k = 1; k <= 5; k++) x.note(0, k, 100 * k, 8);
    expect(x.size(0)).toBe(4);
    expect(x.extent(0, 1)).toBeUndefined();
    expect(x.extent(0, 2)).toBe(200);
    // At least one entry, whatever the block size.
    x.reset([32]);
    x.note(0, 1, 100, 64);
    x.note(0, 2, 200, 64);
    expect(x.size(0)).toBe(1);
    expect(x.extent(0, 2)).toBe(200);
  });

  it("counts past the window only for a prompt the window cut whose whole window matched", () => {
    // 64 keys of 512 tokens (a 32k window); the prompt runs 10,000 tokens past it.
    const prompt = 64 * 512 + 10_000;
    expect(cutByWindow(prompt, 64, 512)).toBe(true);
    // The backend computed 40,000 tokens of a prompt with the same window: cached that far.
    expect(expectedCachedTokens(prompt, 64, 64, 512, 40_000)).toBe(40_000);
    // It computed more than this prompt: all of it is expected cached (the engine never reuses the last
    // token, which the hit's own cap takes care of).
    expect(expectedCachedTokens(prompt, 64, 64, 512, 90_000)).toBe(prompt);
    // Window not wholly matched, or nothing known past it: the match alone.
    expect(expectedCachedTokens(prompt, 64, 63, 512, 40_000)).toBe(63 * 512);
    expect(expectedCachedTokens(prompt, 64, 64, 512, undefined)).toBe(64 * 512);
    // A prompt within the window (its partial last block is not a cut): the match alone.
    expect(cutByWindow(64 * 512 + 100, 64, 512)).toBe(false);
    expect(expectedCachedTokens(64 * 512 + 100, 64, 64, 512, 90_000)).toBe(64 * 512);
    expect(cutByWindow(0, 0, 512)).toBe(false);
  });
});
