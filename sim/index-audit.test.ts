/**
 * The index audit's accounting: its sums agree with the run they watch, its
 * gaps add up to the difference between belief and hit, and the key window
 * shows up where it should (under-belief past the window appears only when
 * the window is shorter than the shared history).
 */
import { describe, expect, it } from "vitest";
import { auditIndex } from "./index-audit";
import { prepareWorkload } from "./prepare";
import { multiTurn } from "./workloads/multi-turn";

const fleet = { backends: 4, kvCacheTokens: 442_368, seed: 3 };
const chat = multiTurn({ rate: 20, seed: 11, requests: 400 });

describe("auditIndex", () => {
  const wide = auditIndex(prepareWorkload(chat, { prefixTokens: 32_768, seed: 1 }), fleet);

  it("sums what the engines reported: Σ hit is the run's cached tokens", () => {
    const r = wide.result;
    expect(wide.requests).toBe(400);
    expect(wide.hitTokens).toBeGreaterThan(0);
    expect(wide.hitTokens / wide.promptTokens).toBeCloseTo(r.hitRate, 6);
  });

  it("splits belief minus hit into over- and under-belief, and each into its causes", () => {
    const a = wide;
    expect(a.believedTokens - a.hitTokens).toBe(a.over.total.tokens - a.under.total.tokens);
    expect(a.under.pastWindow.tokens + a.under.stride.tokens + a.under.unknown.tokens).toBe(
      a.under.total.tokens,
    );
    expect(a.over.presentAtDecision.tokens + a.over.absent.tokens).toBe(a.over.total.tokens);
    expect(a.elsewhere.known.tokens + a.elsewhere.unknown.tokens).toBe(a.elsewhere.total.tokens);
    expect(a.presentTokens).toBeLessThanOrEqual(a.bestPresentTokens);
    expect(a.hitTokens).toBeLessThanOrEqual(a.reusableTokens);
  });

  it("attributes hits past a short key window to the window", () => {
    // Multi-turn histories grow past 256 tokens: the index cannot see reuse beyond them.
    const narrow = auditIndex(prepareWorkload(chat, { prefixTokens: 256, seed: 1 }), fleet);
    expect(narrow.under.pastWindow.tokens).toBeGreaterThan(0.1 * narrow.hitTokens);
    expect(wide.under.pastWindow.tokens).toBeLessThan(narrow.under.pastWindow.tokens / 10);
  });
});
