import { describe, expect, it } from "vitest";
import { MAX_HOMES_COMPUTING, startsCopy } from "./burst-split";

describe("startsCopy", () => {
  it("starts a copy when its own first token at the home plus the delay it adds to the joiners waiting there passes a fresh prefill elsewhere", () => {
    // 8B-like burst: a 4,224-token prefix takes ~220 ms, a 128-token question ~7 ms. The 15th request,
    // 60 ms in, with 13 joiners waiting: its own first token 160 + 7 ms, plus 13 × 7 ms on theirs.
    expect(startsCopy(167, 7, 13, 220, 1, 0, 8)).toBe(true);
    // The same request with one joiner waiting (a shared opening): 167 + 7 < 220, it joins.
    expect(startsCopy(167, 7, 1, 220, 1, 0, 8)).toBe(false);
    // One joiner waiting: its own first token plus one suffix on that joiner, against a fresh prefill elsewhere.
    expect(startsCopy(212, 7, 1, 220, 1, 0, 8)).toBe(false);
    expect(startsCopy(221, 7, 1, 220, 1, 0, 8)).toBe(true);
    // A tie joins: a copy repeats the prefill for nothing.
    expect(startsCopy(206, 7, 2, 220, 1, 0, 8)).toBe(false);
  });

  it("never with nobody joined to the home's pending prefill (k = 0), however late its own first token there", () => {
    // No shared step to relieve: a copy would buy only this request's own first token with a whole prefill.
    expect(startsCopy(221, 7, 0, 220, 1, 0, 8)).toBe(false);
    expect(startsCopy(10_000, 7, 0, 1, 1, 0, 8)).toBe(false);
    // The same request with one joiner waiting starts the copy.
    expect(startsCopy(10_000, 7, 1, 1, 1, 0, 8)).toBe(true);
  });

  it("never past the limit of backends computing the prefix at once", () => {
    expect(MAX_HOMES_COMPUTING).toBe(2);
    expect(startsCopy(10_000, 7, 15, 1, MAX_HOMES_COMPUTING, 0, 8)).toBe(false);
    // With nowhere else to go (Infinity), it joins.
    expect(startsCopy(10_000, 7, 15, Number.POSITIVE_INFINITY, 1, 0, 8)).toBe(false);
  });

  it("while other prefixes are being computed, only if the idle backends still cover them and the next burst after the copy", () => {
    // One other prefix computing, eight backends: its home and ours busy, six idle. After the copy five are
    // left, more than its one copy and the next new burst need: the copy starts.
    expect(startsCopy(10_000, 7, 15, 1, 1, 1, 6)).toBe(true);
    // Exactly enough: three idle, one taken by the copy, one for the other burst, one for the next.
    expect(startsCopy(10_000, 7, 15, 1, 1, 1, 3)).toBe(true);
    expect(startsCopy(10_000, 7, 15, 1, 1, 2, 4)).toBe(true);
    // One short: no copy, however many joiners.
    expect(startsCopy(10_000, 7, 15, 1, 1, 1, 2)).toBe(false);
    expect(startsCopy(10_000, 7, 15, 1, 1, 2, 3)).toBe(false);
    expect(startsCopy(10_000, 7, 15, 1, 1, 3, 0)).toBe(false);
  });

  it("with no other prefix being computed, reserves nothing: a copy even with no backend idle", () => {
    expect(startsCopy(10_000, 7, 15, 1, 1, 0, 0)).toBe(true);
  });
});
