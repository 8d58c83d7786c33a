/**
 * A /v1/completions request whose `prompt` is a batch (a list of strings, or a list of token-id lists) is
 * k requests in one: the engine runs each prompt as its own sequence, reports `usage` summed over the k
 * (vLLM's serving_completion.py adds up every prompt's tokens), and its stream's first token comes when
 * the first sequence has been prefilled, not all k. Through the real Worker and RouterDO against a real
 * emulator: what the router learns from such a request must not be one prompt's figures.
 */
import { describe, expect, it } from "vitest";
import type { RouteInput } from "../../src/worker/router/router-rpc";
import {
  authHeaders,
  backendRow,
  gatewayWithEnv,
  interceptRoute,
  poolStats,
  SPARE_MODEL,
  settle,
  spareUrls,
} from "./helpers";

/** The pool's one backend, a spare-model emulator, under a config of this file's own. */
function pool(): { BACKENDS: string } {
  return { BACKENDS: JSON.stringify([backendRow("batch-1", spareUrls()[0]!, [SPARE_MODEL])]) };
}

/** `count` different prompts of `words` words each (about 2 tokens a word). */
function prompts(seed: string, count: number, words: number): string[] {
  return Array.from({ length: count }, (_, p) =>
    Array.from({ length: words }, (_, i) => `${seed}${p}w${(i * 7919 + p * 31) % 1009}`).join(" "),
  );
}

async function complete(
  prompt: string | string[],
  stream: boolean,
  env: Record<string, unknown> = {},
): Promise<string> {
  const res = await gatewayWithEnv({ ...pool(), ...env }, "/v1/completions", {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model: SPARE_MODEL, prompt, max_tokens: 2, stream }),
  });
  expect(res.status).toBe(200);
  return res.text();
}

describe("a /v1/completions prompt batch", () => {
  it("teaches the router no prefill rate (its usage is the batch's, its TTFT one prompt's); the pool still counts its usage", async () => {
    // A batch of 40 prompts of ~600 tokens: the usage says ~24,000 prompt tokens, the first token came after
    // the first prompt's ~600. Taken as one request's sample, the backend looked 40 times as fast as it is
    // (live, wrangler dev: one such request raised the pool's learned rate 4.4-fold), for every client.
    for (const stream of [true, false]) await complete(prompts(`b${stream}`, 40, 300), stream);
    await settle(SPARE_MODEL);
    const s = await poolStats(SPARE_MODEL);
    // The rate it started with (DEFAULT_PREFILL_TOKENS_PER_SEC): nothing was learned from the batch.
    expect(s.router.backends[0]!.prefillTokensPerSec).toBe(10_000);
    // The operator's counters are the engine's own figures, summed as the engine summed them.
    expect(s.usage.completed).toBe(2);
    expect(s.usage.withUsage).toBe(2);
    expect(s.usage.promptTokens).toBeGreaterThan(40 * 300 * 2);
    expect(s.usage.outputTokens).toBe(2 * 40 * 2);
  });

  it("is routed as the work of all its prompts (the engine prefills each), keyed on the first", async () => {
    const seen: RouteInput[] = [];
    const ROUTER = interceptRoute((input, real) => {
      seen.push(input);
      return real(input);
    });
    const batch = prompts("sum", 40, 300);
    await complete(batch[0]!, false, { ROUTER });
    await complete(batch, false, { ROUTER });
    await settle(SPARE_MODEL);
    const [one, all] = seen;
    expect(all!.blocks).toEqual(one!.blocks);
    expect(all!.prompts).toBe(40);
    expect(one!.prompts).toBeUndefined();
    // The first prompt exactly, the other 39 at ceil(chars / 4). Without the count: the first prompt's alone.
    const rest = batch.slice(1).reduce((n, p) => n + Math.ceil(p.length / 4), 0);
    expect(all!.promptTokens).toBe(one!.promptTokens + rest);
  });

  it("a single prompt of the same total size is still learned from (the guard: the test can see a sample)", async () => {
    await complete(prompts("single", 1, 12_000)[0]!, true);
    await settle(SPARE_MODEL);
    expect((await poolStats(SPARE_MODEL)).router.backends[0]!.prefillTokensPerSec).not.toBe(10_000);
  });
});
