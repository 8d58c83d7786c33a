import { describe, expect, it } from "vitest";
import { MAX_HOMES_COMPUTING, startsCopy } from "./burst-split";

describe("startsCopy", () => {
  it("starts a copy when its own first token at the home plus the delay it adds to the joiners waiting there passes a fresh prefill elsewhere", () => {
    // 8B-like burst: a 4,224-token prefix takes ~220 ms, a 128-token question ~7 ms. The 15th request,
    // 60 ms in, with 13 joiners waiting: its own first token 160 + 7 ms, plus 13 × 7 ms on theirs.
    expect(startsCopy(167, 7, 13, 220, 1, false)).toBe(true);
    // The same request with one joiner waiting (a shared opening): 167 + 7 < 220, it joins.
    expect(startsCopy(167, 7, 1, 220, 1, false)).toBe(false);
    // One joiner waiting: its own first token plus one suffix on that joiner, against a fresh prefill elsewhere.
    expect(startsCopy(212, 7, 1, 220, 1, false)).toBe(false);
    expect(startsCopy(221, 7, 1, 220, 1, false)).toBe(true);
    // A tie joins: a copy repeats the prefill for nothing.
    expect(startsCopy(206, 7, 2, 220, 1, false)).toBe(false);
  });

  it("never with nobody joined to the home's pending prefill (k = 0), however late its own first token there", () => {
    // No shared step to relieve: a copy would buy only this request's own first token with a whole prefill.
    expect(startsCopy(221, 7, 0, 220, 1, false)).toBe(false);
    expect(startsCopy(10_000, 7, 0, 1, 1, false)).toBe(false);
    // The same request with one joiner waiting starts the copy.
    expect(startsCopy(10_000, 7, 1, 1, 1, false)).toBe(true);
  });

  it("never past the limit of backends computing the prefix at once", () => {
    expect(MAX_HOMES_COMPUTING).toBe(2);
    expect(startsCopy(10_000, 7, 15, 1, MAX_HOMES_COMPUTING, false)).toBe(false);
    // With nowhere else to go (Infinity), it joins.
    expect(startsCopy(10_000, 7, 15, Number.POSITIVE_INFINITY, 1, false)).toBe(false);
  });

  it("never while another prefix is being computed from scratch (bursts clustering), however many joiners", () => {
    expect(startsCopy(10_000, 7, 15, 1, 1, true)).toBe(false);
  });
});
