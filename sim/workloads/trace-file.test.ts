import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { describe, expect, it } from "vitest";
import { mooncakeRequest } from "./mooncake";
import { timestampMs } from "./openai-log";
import { requestBlockKeys } from "./segments";
import { parseTrace } from "./trace-file";

const mc = (o: object): string => JSON.stringify(o);

describe("Mooncake records", () => {
  it("makes one segment per hash id, the last one partial", () => {
    const r = mooncakeRequest({ timestamp: 5, input_length: 1100, output_length: 7, hash_ids: [3, 9, 11] });
    if (typeof r === "string") throw new Error(r);
    expect(r.prompt.kind === "segments" && r.prompt.segments).toEqual([
      { key: "mc/3", tokens: 512 },
      { key: "mc/9", tokens: 512 },
      { key: "mc/11", tokens: 76 },
    ]);
    expect(r.promptTokens).toBe(1100);
    expect(requestBlockKeys(r, 512)).toHaveLength(2);
  });
  it("rejects lengths that do not fit the ids", () => {
    expect(mooncakeRequest({ timestamp: 0, input_length: 2000, output_length: 1, hash_ids: [1, 2] })).toMatch(
      /does not fit/,
    );
    expect(mooncakeRequest({ timestamp: 0, input_length: 10, output_length: 1, hash_ids: [] })).toMatch(
      /hash_ids/,
    );
  });
  it("shares keys exactly as far as the hash ids agree", () => {
    const a = mooncakeRequest({ timestamp: 0, input_length: 2048, output_length: 1, hash_ids: [1, 2, 3, 4] });
    const b = mooncakeRequest({ timestamp: 0, input_length: 2048, output_length: 1, hash_ids: [1, 2, 7, 4] });
    if (typeof a === "string" || typeof b === "string") throw new Error("parse");
    const ka = requestBlockKeys(a, 512);
    const kb = requestBlockKeys(b, 512);
    expect(ka.slice(0, 2)).toEqual(kb.slice(0, 2));
    expect(ka[2]).not.toBe(kb[2]);
    expect(ka[3]).not.toBe(kb[3]);
  });
});

describe("timestamps", () => {
  it("detects ISO, epoch ms, epoch seconds and relative ms", () => {
    expect(timestampMs("2026-01-01T00:00:01Z")).toBe(Date.UTC(2026, 0, 1, 0, 0, 1));
    expect(timestampMs(1_767_225_601_000)).toBe(1_767_225_601_000);
    expect(timestampMs(1_767_225_601.5)).toBe(1_767_225_601_500);
    expect(timestampMs(2500)).toBe(2500);
    expect(timestampMs("yesterday")).toBeNull();
    expect(timestampMs(-1)).toBeNull();
  });
});

describe("parseTrace", () => {
  it("reads Mooncake lines, sorts by time, applies speed, counts malformed lines", async () => {
    const text = [
      mc({ timestamp: 2000, input_length: 600, output_length: 5, hash_ids: [0, 1] }),
      "not json",
      mc({ timestamp: 1000, input_length: 512, output_length: 3, hash_ids: [0] }),
      "[1,2]",
      mc({ foo: 1 }),
      mc({ timestamp: 3000, input_length: 99999, output_length: 3, hash_ids: [0] }),
      "",
    ].join("\n");
    const w = await parseTrace(text, { speed: 2 });
    expect(w.requests.map((r) => r.arrivalMs)).toEqual([0, 500]);
    expect(w.malformed).toBe(4);
    expect(w.malformedSamples[0]).toBe("line 2: not JSON");
    expect(w.blockTokens).toBe(512);
  });

  it("tokenizes OpenAI requests with o200k_base and seeds by model and tenant", async () => {
    const sys = { role: "system", content: "You are a helpful assistant. ".repeat(20) };
    const text = [
      mc({
        timestamp: "2026-01-01T00:00:00Z",
        model: "m",
        messages: [sys, { role: "user", content: "hi" }],
        max_tokens: 9,
      }),
      mc({
        timestamp: "2026-01-01T00:00:01.5Z",
        model: "m",
        messages: [sys, { role: "user", content: "yo" }],
      }),
      mc({ timestamp: "2026-01-01T00:00:02Z", model: "m", prompt: "plain prompt", prompt_cache_key: "t" }),
      mc({ timestamp: "2026-01-01T00:00:03Z", messages: "oops" }),
      mc({ timestamp: "2026-01-01T00:00:04Z", messages: [{ content: "no role" }] }),
      mc({ messages: [{ role: "user", content: "no time" }] }),
    ].join("\n");
    const w = await parseTrace(text);
    expect(w.malformed).toBe(3);
    expect(w.blockTokens).toBe(16);
    expect(w.requests.map((r) => r.arrivalMs)).toEqual([0, 1500, 2000]);
    const [a, b, c] = w.requests;
    expect(a!.outputTokens).toBe(9);
    expect(b!.outputTokens).toBe(256);
    // The router is told what the client sent, not the assumed length.
    expect(a!.sentMaxTokens).toBe(9);
    expect(b!.sentMaxTokens).toBeNull();
    expect(c!.tenant).toBe("t");
    expect(a!.promptTokens).toBeGreaterThan(100);
    const ka = requestBlockKeys(a!, 16);
    const kb = requestBlockKeys(b!, 16);
    // The shared system message covers several full blocks: they must match.
    expect(ka.length).toBeGreaterThan(5);
    expect(ka.slice(0, 5)).toEqual(kb.slice(0, 5));
  });

  it("tokenizes a 200,000-letter run in linear time, and ordinary text as js-tiktoken does", async () => {
    // js-tiktoken's merge is quadratic in a piece: 20,000 letters took analyze 92 s, 200,000 would take hours.
    const line = (content: string) =>
      JSON.stringify({ timestamp: 0, model: "m", messages: [{ role: "user", content }] });
    const started = performance.now();
    const w = await parseTrace(line("a".repeat(200_000)));
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(w.malformed).toBe(0);
    expect(w.requests[0]!.promptTokens).toBeGreaterThan(200_000 / 16);
    // Ordinary text: the same ids as js-tiktoken (role + "\n" + content + "\n", the canonical text).
    const text = "You are a helpful assistant. Résumé: 東京 — 42 items, <b>bold</b>!";
    const enc = new Tiktoken(o200kBase);
    const [r] = (await parseTrace(line(text))).requests;
    if (r?.prompt.kind !== "tokens") throw new Error("expected token ids");
    expect(Array.from(r.prompt.tokens)).toEqual(enc.encode(`user\n${text}\n`));
  }, 30_000);

  it("never throws on garbage", async () => {
    const w = await parseTrace("\u0000\n{\n}\nnull\n42\n");
    expect(w.requests).toHaveLength(0);
    expect(w.malformed).toBe(5);
  });
});
