import { describe, expect, it } from "vitest";
import { boundedPrompt, largestKv } from "./prompt-bound";
import { Router } from "./router";
import { seededRandom } from "./seeded-random";
import type { BackendSpec, RouteRequest } from "./types";

const keys = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);

describe("boundedPrompt", () => {
  const L = 262_144;

  it("leaves a prompt within the largest KV as it is (the same object)", () => {
    const req: RouteRequest = { blocks: keys(1, 10), promptTokens: L - 9, outputTokens: 9 };
    expect(boundedPrompt(req, L, 16)).toBe(req);
    const bare: RouteRequest = { blocks: keys(1, 10), promptTokens: L };
    expect(boundedPrompt(bare, L, 16)).toBe(bare);
  });

  it("bounds the output hint by what the largest KV leaves after the prompt", () => {
    // max_tokens at the Worker's limit, 2^20, on a 262k pool: 8,192 prompt tokens leave 253,952 for the answer.
    const req: RouteRequest = { blocks: keys(1, 512), promptTokens: 8192, outputTokens: 1 << 20 };
    expect(boundedPrompt(req, L, 16)).toEqual({
      blocks: req.blocks,
      promptTokens: 8192,
      outputTokens: L - 8192,
    });
    // A prompt counted as filling the largest KV leaves nothing to charge for its answer.
    expect(
      boundedPrompt({ blocks: keys(1, 2048), promptTokens: 140_106, outputTokens: 2048 }, 132_096, 16),
    ).toEqual({ blocks: keys(1, 2048), promptTokens: 132_096, outputTokens: 0 });
    // Past every engine: the keyed blocks, then the answer within what they leave.
    expect(
      boundedPrompt({ blocks: keys(1, 512), promptTokens: 15_308_192, outputTokens: 1 << 20 }, L, 16)
        .outputTokens,
    ).toBe(L - 8192);
    // A batch: its prompts' sum and the answer together never above the largest KV.
    expect(
      boundedPrompt({ blocks: keys(1, 43), promptTokens: 69_000, prompts: 100, outputTokens: 1 << 20 }, L, 16)
        .outputTokens,
    ).toBe(L - 69_000);
  });

  it("counts a prompt past the largest KV by no more than the estimate's error as filling it", () => {
    // Mooncake on the MoE preset: a 126k-token prompt counted 140,106 past its window (32k keyed).
    const req: RouteRequest = { blocks: keys(1, 2048), promptTokens: 140_106 };
    expect(boundedPrompt(req, 132_096, 16).promptTokens).toBe(132_096);
    expect(boundedPrompt({ ...req, promptTokens: 2 * 132_096 }, 132_096, 16).promptTokens).toBe(132_096);
    expect(boundedPrompt({ ...req, promptTokens: 2 * 132_096 + 1 }, 132_096, 16).promptTokens).toBe(32_768);
  });

  it("counts a prompt no engine of the pool can hold as its keyed blocks only", () => {
    // 20,000 image parts: 8,192 keyed tokens, estimated 15.3 M.
    const req: RouteRequest = { blocks: keys(1, 512), promptTokens: 15_308_192, outputTokens: 4000 };
    expect(boundedPrompt(req, L, 16)).toEqual({ blocks: req.blocks, promptTokens: 8192, outputTokens: 4000 });
    // The keyed part itself never passes the bound (a window larger than the KV).
    expect(boundedPrompt({ blocks: keys(1, 512), promptTokens: 50_000 }, 4096, 16).promptTokens).toBe(4096);
    // 16 MiB of text counted ~4.2 M tokens, 8,192 keyed.
    expect(boundedPrompt({ blocks: keys(1, 512), promptTokens: 4_194_304 }, L, 16).promptTokens).toBe(8192);
  });

  it("keeps the placement of a prompt with no block: its count becomes its key", () => {
    expect(boundedPrompt({ blocks: [], promptTokens: 600_000 }, L, 16)).toEqual({
      blocks: [],
      promptTokens: 0,
      promptKey: 600_000,
    });
    expect(boundedPrompt({ blocks: [], promptTokens: 600_000, promptKey: 7 }, L, 16)).toEqual({
      blocks: [],
      promptTokens: 0,
      promptKey: 7,
    });
  });

  it("counts a batch whose every prompt fits as filling the largest KV, at most", () => {
    // 100 prompts of 3,000 tokens: each fits, the sum does not (the engine runs them in turn).
    const batch: RouteRequest = { blocks: keys(1, 187), promptTokens: 300_000, prompts: 100 };
    expect(boundedPrompt(batch, L, 16).promptTokens).toBe(L);
    // Within the bound a batch keeps its sum.
    const small: RouteRequest = { blocks: keys(1, 43), promptTokens: 69_000, prompts: 100 };
    expect(boundedPrompt(small, L, 16)).toBe(small);
    // Prompts each past every engine: the keyed blocks, as for one prompt.
    const huge: RouteRequest = { blocks: keys(1, 512), promptTokens: 2 * 600_000, prompts: 2 };
    expect(boundedPrompt(huge, L, 16).promptTokens).toBe(8192);
  });

  it("takes the largest KV of the fleet", () => {
    expect(largestKv([{ kvCacheTokens: 100 }, { kvCacheTokens: 300 }, { kvCacheTokens: 200 }])).toBe(300);
    expect(largestKv([])).toBe(0);
  });
});

/**
 * Routes `first` through a prefix_aware Router over `fleet`, then `families` new families of 2,000 tokens
 * (4,000 of output), all held in flight: the backend of each.
 */
function spreadAfter(
  fleet: BackendSpec[],
  first: RouteRequest,
  families: number,
  random: () => number,
): { huge: string; others: string[] } {
  const router = new Router(fleet, { policy: "prefix_aware", blockTokens: 16 });
  const huge = router.route(first, { now: 0, random });
  const others: string[] = [];
  for (let f = 0; f < families; f++) {
    const req: RouteRequest = { blocks: keys(10_000 * (f + 1), 125), promptTokens: 2000, outputTokens: 4000 };
    others.push(router.route(req, { now: 2000 + f, random }).decision.backendId);
  }
  return { huge: huge.decision.backendId, others };
}

describe("a prompt estimated past every engine, through the Router (prefix_aware)", () => {
  const fleet: BackendSpec[] = ["a", "b"].map((id) => ({ id, weight: 1, kvCacheTokens: 262_144 }));
  const random = seededRandom(3);

  /** Routes the huge request, then `families` new ones of 2,000 tokens, all held in flight: their backends. */
  const spread = (hugeTokens: number, families: number) =>
    spreadAfter(
      fleet,
      { blocks: keys(1_000_000, 512), promptTokens: hugeTokens, outputTokens: 4000 },
      families,
      random,
    );

  it("does not keep other families off its backend while it runs (15.3 M estimated, 8,192 keyed)", () => {
    const { huge, others } = spread(15_308_192, 16);
    // Without the bound: none of the 16 (the ledger held 15.3 M tokens there for its whole answer).
    expect(others.filter((b) => b === huge).length).toBeGreaterThanOrEqual(6);
  });

  it("is steered around as an ordinary request of its keyed size would be", () => {
    expect(spread(15_308_192, 16).others).toEqual(spread(8192, 16).others);
  });
});

describe("an output hint past every engine, through the Router (prefix_aware)", () => {
  const fleet: BackendSpec[] = ["a", "b"].map((id) => ({ id, weight: 1, kvCacheTokens: 262_144 }));
  const random = seededRandom(5);

  /** Routes a 2,000-token request with `maxTokens`, then 16 new families of 2,000, all held: their backends. */
  const spread = (maxTokens: number) =>
    spreadAfter(
      fleet,
      { blocks: keys(1_000_000, 125), promptTokens: 2000, outputTokens: maxTokens },
      16,
      random,
    );

  it("does not keep other families off its backend while it runs (max_tokens 2^20 on 262k engines)", () => {
    const { huge, others } = spread(1 << 20);
    // Without the bound: none of the 16 (a 1 M-token answer charged where no engine holds past 262k). With it,
    // 3: the answer may still fill an engine, and is charged as doing so.
    expect(others.filter((b) => b === huge).length).toBeGreaterThanOrEqual(3);
  });

  it("says on its decision what it was counted as, and only when that is not as it came", () => {
    const router = new Router(fleet, { policy: "prefix_aware", blockTokens: 16 });
    const ctx = { now: 0, random };
    const huge = { blocks: keys(1, 125), promptTokens: 15_308_192, outputTokens: 1 << 20 };
    expect(router.route(huge, ctx).decision.routed).toEqual({
      promptTokens: 2000,
      outputTokens: 262_144 - 2000,
    });
    const plain = { blocks: keys(5000, 125), promptTokens: 2000, outputTokens: 4000 };
    expect(router.route(plain, ctx).decision.routed).toBeUndefined();
  });

  it("is steered around as a request asking for what an engine can hold would be", () => {
    expect(spread(1 << 20).others).toEqual(spread(262_144 - 2000).others);
  });
});
