import { describe, expect, it } from "vitest";
import { believedUsage } from "./usage-bounds";

const one = { sequences: 1, prompts: 1, kvCacheTokens: 262_144 };

describe("believedUsage", () => {
  it("keeps a count the request could have: within max_tokens and the engine's KV", () => {
    const u = { promptTokens: 2000, cachedTokens: 1500, completionTokens: 256 };
    expect(believedUsage(u, { ...one, maxTokens: 256 })).toEqual(u);
    expect(believedUsage(u, one)).toEqual(u);
    expect(believedUsage(undefined, one)).toBeUndefined();
  });

  it("drops completion_tokens past max_tokens, or past the engine's KV when none was sent", () => {
    const u = { promptTokens: 64, completionTokens: 262_145 };
    expect(believedUsage(u, one)).toEqual({ promptTokens: 64 });
    expect(believedUsage({ completionTokens: 257 }, { ...one, maxTokens: 256 })).toEqual({});
  });

  it("allows every sequence of every prompt its max_tokens (n, best_of, a batch)", () => {
    expect(
      believedUsage({ completionTokens: 3 * 2 * 100 }, { ...one, maxTokens: 100, sequences: 3, prompts: 2 }),
    ).toEqual({ completionTokens: 600 });
    expect(
      believedUsage({ completionTokens: 601 }, { ...one, maxTokens: 100, sequences: 3, prompts: 2 }),
    ).toEqual({});
  });

  it("drops prompt_tokens past the engine's KV per prompt, and its cached part with it", () => {
    expect(believedUsage({ promptTokens: 262_145, cachedTokens: 10, completionTokens: 5 }, one)).toEqual({
      completionTokens: 5,
    });
    expect(believedUsage({ promptTokens: 300_000 }, { ...one, prompts: 2 })).toEqual({
      promptTokens: 300_000,
    });
  });
});
