import { describe, expect, it } from "vitest";
import { encodeO200k } from "../src/prefix/tokenizer";
import { POLICY_NAMES } from "../src/routing/types";
import { BASELINE_NAMES } from "./baselines/index";
import { routerFactory, viewOf } from "./policies";
import { prepareWorkload } from "./prepare";
import {
  GATEWAY_VIEW,
  gatewayPromptTokens,
  gatewayUnconfirmedTokens,
  routeRequest,
  TAIL_COUNT_FACTORS,
  tailCountFactor,
} from "./request-view";
import { simulatePolicy } from "./simulator";
import { segmentRequest } from "./workloads/request";
import type { Workload, WorkloadRequest } from "./workloads/types";

/** The same 30,000-token prompt twice, the second long after the first finished. */
const longTwice: Workload = {
  name: "long-twice",
  blockTokens: 16,
  malformed: 0,
  requests: [0, 60_000].map((t) => segmentRequest(t, [{ key: "doc", tokens: 30_000 }], 8)),
};
const w = prepareWorkload(longTwice, { prefixTokens: 8192 });
const fleet = { backends: 4, kvCacheTokens: 200_000, seed: 1 };

describe("what each router is given", () => {
  it("gives our policies the gateway's keys and every peer the whole prompt's", () => {
    for (const p of POLICY_NAMES) expect(viewOf(p)).toEqual(GATEWAY_VIEW);
    for (const p of BASELINE_NAMES) expect(viewOf(p).keys).toBe("whole-prompt");
    expect(routeRequest(w, 0, GATEWAY_VIEW).blocks).toHaveLength(8192 / 16);
    expect(routeRequest(w, 0, viewOf("sglang")).blocks).toHaveLength(30_000 / 16);
    expect(routeRequest(w, 0, viewOf("sglang")).blocks.slice(0, 512)).toEqual(w.gatewayBlocks[0]);
  });

  it("gives a prompt with no full block the gateway's whole-prompt key, only in the gateway's view", () => {
    const short: Workload = {
      name: "short",
      blockTokens: 16,
      malformed: 0,
      requests: ["a", "b", "a"].map((k, i) => segmentRequest(i * 1000, [{ key: k, tokens: 9 }], 4)),
    };
    const p = prepareWorkload(short);
    const keys = [0, 1, 2].map((i) => routeRequest(p, i, GATEWAY_VIEW).promptKey);
    expect(keys[0]).toBeDefined();
    expect(keys[0]).toBe(keys[2]);
    expect(keys[1]).not.toBe(keys[0]);
    expect(routeRequest(p, 0, viewOf("sagemaker")).promptKey).toBeUndefined();
    expect(routeRequest(w, 0, GATEWAY_VIEW).promptKey).toBeUndefined();
  });

  it("lets SGLang's match ratio (match / whole prompt) pass its 0.3 threshold on a long prompt", () => {
    const sglang = (view = viewOf("sglang")) =>
      simulatePolicy(w, fleet, "sglang", routerFactory("sglang", w.blockTokens), view);
    // Its own inputs: the repeat matches all 30,000 tokens, ratio 1 → the tree's worker.
    expect(sglang().reasons.affinity).toBe(1);
    // Cut to our 8,192-token window it could match at most 8,192 / 30,000 = 0.27: never affinity.
    expect(sglang(GATEWAY_VIEW).reasons.affinity).toBe(0);
  });
});

describe("the prompt-token count each router is given", () => {
  const lo = TAIL_COUNT_FACTORS[0]!;
  const hi = TAIL_COUNT_FACTORS[TAIL_COUNT_FACTORS.length - 1]!;

  it("gives our policies the Worker's count: exact up to the window, ceil(chars / 4) modelled past it", () => {
    const ours = routeRequest(w, 0, GATEWAY_VIEW).promptTokens;
    const tail = ours - 8192;
    expect(tail).toBeGreaterThanOrEqual(Math.ceil(21_808 * lo));
    expect(tail).toBeLessThanOrEqual(Math.ceil(21_808 * hi));
    expect(ours).not.toBe(30_000);
    // Peers tokenize or read the whole prompt: the true count.
    for (const p of BASELINE_NAMES) expect(routeRequest(w, 0, viewOf(p)).promptTokens).toBe(30_000);
    // Within the window the Worker tokenizes everything: exact.
    const short = prepareWorkload(
      { ...longTwice, requests: [segmentRequest(0, [{ key: "s", tokens: 8192 }], 8)] },
      { prefixTokens: 8192 },
    );
    expect(routeRequest(short, 0, GATEWAY_VIEW).promptTokens).toBe(8192);
  });

  it("is deterministic per request: the same text past the window, the same factor, for a seed", () => {
    const turns: Workload = {
      ...longTwice,
      // A conversation's two turns: the second repeats the first's 20,000 tokens and adds 4,000.
      requests: [
        segmentRequest(0, [{ key: "history", tokens: 20_000 }], 8),
        segmentRequest(
          1,
          [
            { key: "history", tokens: 20_000 },
            { key: "turn-2", tokens: 4_000 },
          ],
          8,
        ),
      ],
    };
    const counts = (seed: number) => prepareWorkload(turns, { prefixTokens: 8192, seed }).gatewayPromptTokens;
    expect(counts(3)).toEqual(counts(3));
    const [a, b] = counts(3);
    // One factor for the whole tail of each turn: equal ratios (to rounding).
    expect((a! - 8192) / 11_808).toBeCloseTo((b! - 8192) / 15_808, 3);
    const seeds = [1, 2, 3, 4, 5, 6, 7, 8].map((s) => counts(s)[0]);
    expect(new Set(seeds).size).toBeGreaterThan(1);
  });

  it("draws factors with the measured distribution", () => {
    expect(tailCountFactor(0)).toBe(lo);
    expect(tailCountFactor(0.999_999)).toBeCloseTo(hi, 3);
    expect(tailCountFactor(0.5)).toBe(TAIL_COUNT_FACTORS[10]);
    for (let i = 1; i < TAIL_COUNT_FACTORS.length; i++)
      expect(TAIL_COUNT_FACTORS[i]!).toBeGreaterThanOrEqual(TAIL_COUNT_FACTORS[i - 1]!);
    // Over many prompts the drawn factors' median is the table's.
    const many: Workload = {
      ...longTwice,
      requests: Array.from({ length: 2001 }, (_, i) =>
        segmentRequest(i, [{ key: `d${i}`, tokens: 18_192 }], 8),
      ),
    };
    const f = prepareWorkload(many, { prefixTokens: 8192 })
      .gatewayPromptTokens.map((c) => (c - 8192) / 10_000)
      .sort((x, y) => x - y);
    expect(f[1000]!).toBeGreaterThan(TAIL_COUNT_FACTORS[9]!);
    expect(f[1000]!).toBeLessThan(TAIL_COUNT_FACTORS[11]!);
  });

  it("applies the Worker's rule to a logged prompt's text, and keeps a count the gateway logged", () => {
    const text = "The quick brown fox jumps over the lazy dog. ".repeat(20);
    const tokens = Uint32Array.from(encodeO200k(text).tokens);
    const logged: WorkloadRequest = {
      arrivalMs: 0,
      promptTokens: tokens.length,
      outputTokens: 1,
      prompt: { kind: "tokens", tokens, text },
    };
    const fromGateway: WorkloadRequest = {
      ...segmentRequest(0, [{ key: "g", tokens: 500 }], 1),
      gatewayPromptTokens: 432,
    };
    const [fromText, kept] = gatewayPromptTokens([logged, fromGateway], [[], []], 16, 32, 1);
    expect(fromText).toBe(32 + Math.ceil((text.length - encodeO200k(text, 32).charsConsumed) / 4));
    expect(kept).toBe(432);
  });

  it("says, as the Worker does, what a logged prompt's runs of one character past the window claim", () => {
    const text = `${"The quick brown fox jumps over the lazy dog. ".repeat(20)}${" ".repeat(4000)}`;
    const tokens = Uint32Array.from(encodeO200k(text).tokens);
    const padded: WorkloadRequest = {
      arrivalMs: 0,
      promptTokens: tokens.length,
      outputTokens: 1,
      prompt: { kind: "tokens", tokens, text },
    };
    const plain: WorkloadRequest = { ...padded, prompt: { kind: "tokens", tokens, text: text.trimEnd() } };
    expect(
      gatewayUnconfirmedTokens([padded, plain, segmentRequest(0, [{ key: "g", tokens: 500 }], 1)], 32),
    ).toEqual([998, undefined, undefined]);
    const prepared = prepareWorkload(
      { name: "padded", blockTokens: 16, malformed: 0, requests: [padded] },
      { prefixTokens: 32 },
    );
    expect(routeRequest(prepared, 0, GATEWAY_VIEW).unconfirmedTokens).toBe(998);
    expect(
      routeRequest(prepared, 0, { ...GATEWAY_VIEW, promptTokens: "exact" }).unconfirmedTokens,
    ).toBeUndefined();
  });
});
