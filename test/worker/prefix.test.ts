/**
 * Prefix keys inside workerd: the same code the Worker runs, with the same
 * promises as under Node (test/node/prefix.test.ts) — tokens identical to
 * js-tiktoken's, shared system prompts share leading blocks, tenants never
 * share, tools and content parts change keys, the cap, the memo.
 */
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { describe, expect, it } from "vitest";
import {
  type ChatBody,
  clearPrefixMemo,
  prefixKeysForRequest,
  prefixMemoStats,
} from "../../src/prefix/request-keys";
import { encodeO200k, o200kLoaded, o200kTokenizer } from "../../src/prefix/tokenizer";
import { prose, tokenizerCorpus } from "../node/tokenizer-corpus";

const opts = { model: "test-model", blockTokens: 16, prefixTokens: 8192 };
const SYSTEM = prose(11, 1500);

/**
 * Wall time of `build`, in workerd. Its clocks stand still during synchronous
 * CPU work (Spectre mitigation) and move on at the next I/O or timer, so we
 * read the clock, run, yield to a 0 ms timer, and read it again: the result
 * is the build's CPU time plus one timer turn, at 1 ms resolution.
 */
async function workerdMillis(build: () => unknown): Promise<number> {
  await new Promise((r) => setTimeout(r, 0));
  const t0 = Date.now();
  build();
  await new Promise((r) => setTimeout(r, 0));
  return Date.now() - t0;
}

function shared(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function ask(question: string, extra: Partial<ChatBody> = {}): ChatBody {
  return {
    messages: [
      { role: "system", content: SYSTEM },
      { role: "user", content: question },
    ],
    ...extra,
  };
}

let reference: Tiktoken | undefined;

describe("prefix keys in workerd", () => {
  it("builds o200k lazily, far faster than js-tiktoken's constructor", async () => {
    const ours = o200kLoaded() ? Number.NaN : await workerdMillis(() => o200kTokenizer());
    const theirs = await workerdMillis(() => {
      reference = new Tiktoken(o200kBase);
    });
    console.log(`[cold start in workerd] ours: ${ours} ms, js-tiktoken constructor: ${theirs} ms`);
    expect(o200kLoaded()).toBe(true);
    if (!Number.isNaN(ours)) expect(ours * 5).toBeLessThan(theirs);
  }, 120_000);

  it("produces js-tiktoken's tokens exactly", () => {
    const ref = reference ?? new Tiktoken(o200kBase);
    for (const text of tokenizerCorpus()) {
      expect(encodeO200k(text).tokens, JSON.stringify(text.slice(0, 40))).toEqual(ref.encode(text, [], []));
    }
  }, 120_000);

  it("shares the system prompt's blocks across questions; tenants never share", () => {
    const a = prefixKeysForRequest("chat", ask(prose(1, 300)), opts);
    const b = prefixKeysForRequest("chat", ask(prose(2, 300)), opts);
    const sys = shared(a.blocks, b.blocks);
    expect(sys).toBeGreaterThan(50);
    expect(sys).toBeLessThan(a.blocks.length);
    const t1 = prefixKeysForRequest("chat", ask(prose(1, 300)), { ...opts, tenant: "acme" });
    const t2 = prefixKeysForRequest("chat", ask(prose(1, 300)), { ...opts, tenant: "globex" });
    expect(shared(t1.blocks, a.blocks)).toBe(0);
    expect(shared(t1.blocks, t2.blocks)).toBe(0);
  });

  it("changes keys with tool definitions and content parts", () => {
    const plain = prefixKeysForRequest("chat", ask("weather?"), opts);
    const tool = {
      type: "function",
      function: { name: "get_weather", description: "Weather", parameters: { type: "object" } },
    };
    const withTools = prefixKeysForRequest("chat", ask("weather?", { tools: [tool] }), opts);
    const sys = shared(plain.blocks, withTools.blocks);
    expect(sys).toBeGreaterThan(50);
    expect(withTools.blocks.length).toBeGreaterThan(sys);

    const image = (url: string) =>
      prefixKeysForRequest(
        "chat",
        {
          messages: [
            { role: "system", content: SYSTEM },
            {
              role: "user",
              content: [
                { type: "image_url", image_url: { url } },
                { type: "text", text: prose(4, 60) },
              ],
            },
          ],
        },
        opts,
      );
    const a = image("https://img.example/a.png");
    expect(image("https://img.example/a.png")).toEqual(a);
    expect(shared(a.blocks, image("https://img.example/b.png").blocks)).toBe(sys);
  });

  it("keys at most prefixTokens and estimates the rest", () => {
    const long = prose(21, 12_000);
    const r = prefixKeysForRequest(
      "chat",
      { messages: [{ role: "user", content: long }] },
      { ...opts, prefixTokens: 2048 },
    );
    expect(r.blocks.length).toBe(128);
    expect(r.promptTokens).toBeGreaterThan(10_000);
  });

  it("serves a repeated system prompt from the isolate memo", () => {
    clearPrefixMemo();
    const first = prefixKeysForRequest("chat", ask("first question"), opts);
    const before = prefixMemoStats();
    const second = prefixKeysForRequest("chat", ask("second question"), opts);
    expect(prefixMemoStats().hits).toBe(before.hits + 1);
    expect(shared(first.blocks, second.blocks)).toBeGreaterThan(50);
  });
});
