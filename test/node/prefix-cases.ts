/**
 * The promises of prefix keying, as one suite that runs in both runtimes:
 * under Node (test/node/prefix.test.ts) and inside workerd, where the Worker
 * runs it (test/worker/prefix.test.ts). Keys of a request, shared system
 * prompts, tenants and models, tools, content parts, roles, turns, the cap,
 * the memo, completions prompts.
 */
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { beforeAll, describe, expect, it } from "vitest";
import { blockKeysFromTokens, chainSeed } from "../../src/prefix/block-keys";
import {
  type ChatBody,
  type CompletionsBody,
  clearPrefixMemo,
  prefixKeysForRequest,
  prefixMemoStats,
} from "../../src/prefix/request-keys";
import { prose } from "./tokenizer-corpus";

const opts = { model: "llama-3.1-70b", blockTokens: 16, prefixTokens: 8192 };
const SYSTEM = prose(11, 1500); // ~1.7k tokens
let reference: Tiktoken;

function chat(body: ChatBody, o: Partial<typeof opts> & { tenant?: string } = {}) {
  return prefixKeysForRequest("chat", body, { ...opts, ...o });
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

/** Number of leading equal keys. */
function shared(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

const TOOL = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

/** Declares the suite; `runtime` names it in the report. */
export function prefixKeyCases(runtime: string): void {
  beforeAll(() => {
    reference ??= new Tiktoken(o200kBase);
  }, 120_000);

  describe(`prefixKeysForRequest (chat, ${runtime})`, () => {
    it("shares the system prompt's leading blocks across different questions, and only those", () => {
      const systemBlocks = Math.floor((reference.encode(SYSTEM, [], []).length + 1) / 16);
      const a = chat(ask(prose(1, 300)));
      const b = chat(ask(prose(2, 300)));
      expect(systemBlocks).toBeGreaterThan(50);
      expect(shared(a.blocks, b.blocks)).toBe(systemBlocks);
      expect(a.blocks.length).toBeGreaterThan(systemBlocks + 10);
    });

    it("is deterministic and independent of the memo", () => {
      const body = ask(prose(5, 400));
      const warm = chat(body);
      clearPrefixMemo();
      const cold = chat(body);
      expect(cold).toEqual(warm);
    });

    it("separates tenants and models completely", () => {
      const body = ask("same question");
      const base = chat(body);
      expect(shared(base.blocks, chat(body, { tenant: "acme" }).blocks)).toBe(0);
      expect(shared(chat(body, { tenant: "acme" }).blocks, chat(body, { tenant: "globex" }).blocks)).toBe(0);
      expect(shared(base.blocks, chat(body, { model: "qwen3-32b" }).blocks)).toBe(0);
      expect(chat(body, { tenant: "acme" })).toEqual(chat(body, { tenant: "acme" }));
    });

    it("places tools after the system prompt: they change the keys from there on", () => {
      const without = chat(ask("weather in Paris?"));
      const withTool = chat(ask("weather in Paris?", { tools: [TOOL] }));
      const otherTool = chat(
        ask("weather in Paris?", {
          tools: [{ ...TOOL, function: { ...TOOL.function, description: "Weather" } }],
        }),
      );
      const sys = shared(without.blocks, withTool.blocks);
      expect(sys).toBeGreaterThan(50);
      expect(withTool.blocks.length).toBeGreaterThan(without.blocks.length);
      expect(shared(withTool.blocks, otherTool.blocks)).toBe(sys);
      expect(withTool.promptTokens).toBeGreaterThan(without.promptTokens + 20);
    });

    it("ignores the key order of tool schemas", () => {
      const reordered = {
        function: {
          parameters: { required: ["city"], properties: { city: { type: "string" } }, type: "object" },
          description: TOOL.function.description,
          name: TOOL.function.name,
        },
        type: "function",
      };
      expect(chat(ask("q", { tools: [reordered] }))).toEqual(chat(ask("q", { tools: [TOOL] })));
    });

    it("treats text parts like string content, and fingerprints images by URL without decoding them", () => {
      const text = "describe this picture in detail please, with every object you can see";
      const asString = chat({ messages: [{ role: "user", content: text }] });
      const asParts = chat({ messages: [{ role: "user", content: [{ type: "text", text }] }] });
      expect(asParts).toEqual(asString);

      const img = (url: string) =>
        chat({
          messages: [
            { role: "system", content: SYSTEM },
            {
              role: "user",
              content: [
                { type: "image_url", image_url: { url } },
                { type: "text", text },
              ],
            },
          ],
        });
      const cat = img(`data:image/png;base64,${"iVBORw0KGgo".repeat(10_000)}A`);
      const dog = img(`data:image/png;base64,${"iVBORw0KGgo".repeat(10_000)}B`);
      expect(img(`data:image/png;base64,${"iVBORw0KGgo".repeat(10_000)}A`)).toEqual(cat);
      const sys = shared(cat.blocks, chat(ask("x")).blocks);
      expect(sys).toBeGreaterThan(50);
      expect(shared(cat.blocks, dog.blocks)).toBe(sys); // same system prompt, different image
      // The image counts as an image in the cost model, not as 110k characters of base64.
      expect(cat.promptTokens).toBeLessThan(2_000 + 765 + 100);
      expect(cat.promptTokens).toBeGreaterThan(765);
    });

    it("keys roles, names, tool calls and tool results", () => {
      const base = { role: "user", content: "run it" } as const;
      // The varied message goes first and a long one follows, so every difference lands in a full block.
      const keys = (m: ChatBody["messages"][number]) =>
        chat({ messages: [m, { role: "user", content: SYSTEM }] }).blocks.join();
      const variants = [
        keys(base),
        keys({ ...base, role: "assistant" }),
        keys({ ...base, name: "alice" }),
        keys({
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"x":1}' } }],
        }),
        keys({
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"x":2}' } }],
        }),
        keys({ role: "tool", content: "42", tool_call_id: "c1" }),
        keys({ role: "tool", content: "42", tool_call_id: "c2" }),
      ];
      expect(new Set(variants).size).toBe(variants.length);
    });

    it("is prefix-stable across turns: each turn's keys start with the previous turn's", () => {
      const messages: ChatBody["messages"][number][] = [{ role: "system", content: SYSTEM }];
      let previous: number[] = [];
      for (let turn = 0; turn < 4; turn++) {
        messages.push({ role: "user", content: prose(100 + turn, 80) });
        const now = chat({ messages: [...messages] }).blocks;
        expect(now.slice(0, previous.length)).toEqual(previous);
        expect(now.length).toBeGreaterThan(previous.length);
        previous = now;
        messages.push({ role: "assistant", content: prose(200 + turn, 120) });
      }
    });

    it("caps the keyed prefix and estimates the rest", () => {
      const long = prose(21, 20_000); // ~22k tokens
      const exact = reference.encode(long, [], []).length;
      const a = chat({ messages: [{ role: "user", content: long }] }, { prefixTokens: 1024 });
      const b = chat(
        { messages: [{ role: "user", content: `${long} but a different ending` }] },
        { prefixTokens: 1024 },
      );
      expect(a.blocks.length).toBe(64);
      expect(b.blocks).toEqual(a.blocks);
      expect(a.promptTokens).toBeGreaterThan(exact * 0.75);
      expect(a.promptTokens).toBeLessThan(exact * 1.35);
      const uncapped = chat({ messages: [{ role: "user", content: long }] }, { prefixTokens: 1 << 20 });
      expect(uncapped.promptTokens).toBe(exact + 2); // + role and end-of-message markers
      expect(uncapped.blocks.slice(0, 64)).toEqual(a.blocks);
    });

    it("gives a prompt shorter than one block a key of its own (its whole text), and a longer one none", () => {
      const short = (q: string) => chat({ messages: [{ role: "user", content: q }] });
      const hi = short("hi");
      expect(hi.blocks).toEqual([]);
      expect(hi.promptKey).toBeDefined();
      expect(short("hi").promptKey).toBe(hi.promptKey);
      const keys = new Set<number | undefined>();
      for (let i = 0; i < 40; i++) keys.add(short(`question ${i}?`).promptKey);
      expect(keys.size).toBe(40);
      expect(chat({ messages: [{ role: "user", content: "hi" }] }, { tenant: "t" }).promptKey).not.toBe(
        hi.promptKey,
      );
      expect(chat(ask("hi")).promptKey).toBeUndefined();
    });

    it("serves a repeated system prompt from the memo", () => {
      clearPrefixMemo();
      chat(ask("first"));
      const before = prefixMemoStats();
      chat(ask("second"));
      const after = prefixMemoStats();
      expect(after.hits).toBe(before.hits + 1);
      expect(after.tokens).toBe(before.tokens); // "second" is too short to store
    });
  });

  describe(`prefixKeysForRequest (completions, ${runtime})`, () => {
    const text = prose(31, 600);
    const tokens = () => reference.encode(text, [], []);

    it("keys a string prompt on js-tiktoken's exact tokens", () => {
      const r = prefixKeysForRequest("completions", { prompt: text }, opts);
      expect(r.blocks).toEqual(blockKeysFromTokens(tokens(), chainSeed(opts.model), 16, 8192));
      expect(r.promptTokens).toBe(tokens().length);
    });

    it("uses token-id prompts as tokens, so ids and text agree", () => {
      // Keys and counts agree; `keyed.chars` does not (ids have no characters).
      const keysOf = (prompt: CompletionsBody["prompt"]) => {
        const r = prefixKeysForRequest("completions", { prompt }, opts);
        return { blocks: r.blocks, promptTokens: r.promptTokens, keyedTokens: r.keyed.tokens };
      };
      const fromText = keysOf(text);
      expect(keysOf(tokens())).toEqual(fromText);
      // A batch of id lists: keyed on its first, the others counted by their length.
      expect(keysOf([tokens(), [1, 2, 3]])).toEqual({ ...fromText, promptTokens: fromText.promptTokens + 3 });
    });

    it("keys a batch on its first prompt and counts every prompt (the engine prefills each)", () => {
      const single = prefixKeysForRequest("completions", { prompt: text }, opts);
      expect(prefixKeysForRequest("completions", { prompt: [text] }, opts)).toEqual(single);
      const pair = prefixKeysForRequest("completions", { prompt: [text, "other"] }, opts);
      // Same keys; "other" is 5 characters past the keyed prompt: ceil(5 / 4) = 2, unread.
      expect(pair).toEqual({ ...single, promptTokens: single.promptTokens + 2 });
      // 100 prompts of the same text: keyed once, counted 100 times (the further 99 at ceil(chars / 4)).
      const hundred = prefixKeysForRequest("completions", { prompt: Array(100).fill(text) }, opts);
      expect(hundred.blocks).toEqual(single.blocks);
      expect(hundred.keyed).toEqual(single.keyed);
      expect(hundred.promptTokens).toBe(single.promptTokens + 99 * Math.ceil(text.length / 4));
      expect(prefixKeysForRequest("completions", { prompt: [] }, opts)).toEqual({
        blocks: [],
        promptTokens: 0,
        keyed: { tokens: 0, chars: 0, segments: 0 },
      });
    });

    it("rejects a body of the wrong kind", () => {
      expect(() => prefixKeysForRequest("chat", { prompt: "x" }, opts)).toThrow(TypeError);
      expect(() => prefixKeysForRequest("completions", { messages: [] }, opts)).toThrow(TypeError);
    });
  });
}
