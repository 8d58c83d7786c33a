/**
 * The emulator runs the engine model's schedule, so what vLLM V1 does with
 * two requests that share a long prefix and arrive together shows through
 * HTTP: the first one's prefill registers the prefix blocks when it is
 * scheduled, and the second, scheduled in the next step while that prefill
 * is still running, reports them in usage.prompt_tokens_details.cached_tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "./server";
import { chatRequest, postChat, readSse } from "./test-client";

let emu: Emulator;

beforeAll(async () => {
  // Real time, Llama-3.1-8B on one H100: a ~6k-token prefill takes ~300 ms, long
  // enough for the second request to arrive while the first is still prefilling.
  emu = await startEmulator({ port: 0, model: "llama-3.1-8b-instruct", speed: 1 });
}, 60_000);

afterAll(async () => {
  await emu?.close();
});

const shared = "You are a careful assistant. Answer in plain words, and cite the manual. ".repeat(400);

async function cachedTokensOf(user: string): Promise<{ cached: number; prompt: number }> {
  const body = JSON.parse(chatRequest(user, { stream: true, stream_options: { include_usage: true } }));
  body.messages[0].content = shared;
  const sse = await readSse(await postChat(emu.url, JSON.stringify(body)));
  expect(sse.done).toBe(true);
  const usage = sse.events.at(-1)!.usage as {
    prompt_tokens: number;
    prompt_tokens_details: { cached_tokens: number };
  };
  return { cached: usage.prompt_tokens_details.cached_tokens, prompt: usage.prompt_tokens };
}

describe("emulator: two streamed requests with one long prefix, sent at once", () => {
  it("the one scheduled second reuses the prefix the first is still prefilling", async () => {
    const [a, b] = await Promise.all([cachedTokensOf("question one"), cachedTokensOf("question two")]);
    const [first, second] = a.cached <= b.cached ? [a, b] : [b, a];
    expect(first.prompt).toBeGreaterThan(5000);
    expect(first.cached).toBe(0);
    // Every full block of the shared system message; the questions differ after it.
    expect(second.cached).toBeGreaterThan(second.prompt - 64);
    expect(second.cached % 16).toBe(0);
    const m = emu.metrics();
    expect(m.prefixHitTokens).toBe(second.cached);
  });
});
