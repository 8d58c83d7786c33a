import { describe, expect, it } from "vitest";
import { boundedPrompt, largestKv } from "./prompt-bound";
import { Router } from "./router";
import { seededRandom } from "./seeded-random";
import type { BackendSpec, RouteRequest } from "./types";

const keys = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);

describe("boundedPrompt", () => {
  const L = 262_144;

  it("leaves a prompt within the largest KV as it is (the same object)", () => {
    const req: RouteRequest = { blocks: keys(1, 10), promptTokens: L, outputTokens: 9 };
    expect(boundedPrompt(req, L, 16)).toBe(req);
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

describe("a prompt estimated past every engine, through the Router (prefix_aware)", () => {
  const fleet: BackendSpec[] = ["a", "b"].map((id) => ({ id, weight: 1, kvCacheTokens: 262_144 }));
  const random = seededRandom(3);

  /** Routes the huge request, then `families` new ones of 2,000 tokens, all held in flight: their backends. */
  function spread(hugeTokens: number, families: number): { huge: string; others: string[] } {
    const router = new Router(fleet, { policy: "prefix_aware", blockTokens: 16 });
    const huge = router.route(
      { blocks: keys(1_000_000, 512), promptTokens: hugeTokens, outputTokens: 4000 },
      {
        now: 0,
        random,
      },
    );
    const others: string[] = [];
    for (let f = 0; f < families; f++) {
      const req: RouteRequest = {
        blocks: keys(10_000 * (f + 1), 125),
        promptTokens: 2000,
        outputTokens: 4000,
      };
      others.push(router.route(req, { now: 2000 + f, random }).decision.backendId);
    }
    return { huge: huge.decision.backendId, others };
  }

  it("does not keep other families off its backend while it runs (15.3 M estimated, 8,192 keyed)", () => {
    const { huge, others } = spread(15_308_192, 16);
    // Without the bound: none of the 16 (the ledger held 15.3 M tokens there for its whole answer).
    expect(others.filter((b) => b === huge).length).toBeGreaterThanOrEqual(6);
  });

  it("is steered around as an ordinary request of its keyed size would be", () => {
    expect(spread(15_308_192, 16).others).toEqual(spread(8192, 16).others);
  });
});
