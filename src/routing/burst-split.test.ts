import { describe, expect, it } from "vitest";
import { MAX_HOMES_COMPUTING, startsCopy } from "./burst-split";

describe("startsCopy", () => {
  it("starts a copy when the joining batch's slowest first token comes after a fresh prefill elsewhere", () => {
    expect(startsCopy(430, 423, 1, false)).toBe(true);
    expect(startsCopy(416, 423, 1, false)).toBe(false);
    // A tie joins: a copy repeats the prefill for nothing.
    expect(startsCopy(423, 423, 1, false)).toBe(false);
  });

  it("never past the limit of backends computing the prefix at once", () => {
    expect(MAX_HOMES_COMPUTING).toBe(2);
    expect(startsCopy(10_000, 1, MAX_HOMES_COMPUTING, false)).toBe(false);
    // With nowhere else to go (Infinity), it joins.
    expect(startsCopy(10_000, Number.POSITIVE_INFINITY, 1, false)).toBe(false);
  });

  it("never while another prefix is being computed from scratch (bursts clustering), however slow the batch", () => {
    expect(startsCopy(10_000, 1, 1, true)).toBe(false);
  });
});
