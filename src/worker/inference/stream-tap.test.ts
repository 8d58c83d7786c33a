import { describe, expect, it } from "vitest";
import { endsInsideJson, JsonTap, SseTap } from "./stream-tap";

describe("endsInsideJson: a JSON body cut short", () => {
  it.each([
    ['{"id":"x","choices":[{"message":{"content":"Hel', true],
    ['{"id":"x","choices":[]', true],
    ['{"a":"a \\" }"', true],
    ["\ufeff  [1, 2", true],
    ['{"id":"x"}', false],
    ['{"logprob": NaN, "top": [-Infinity]}', false],
    ['{"a":"} ] \\\\"}', false],
    ["<html>login</html>", false],
    ["", false],
    ["Internal Server Error", false],
  ])("%j → %s", (text, cut) => {
    expect(endsInsideJson(text)).toBe(cut);
  });

  it("is what the JSON tap says at the end of a body that does not parse, and only then", () => {
    const enc = new TextEncoder();
    const cut = new JsonTap();
    cut.push(enc.encode('{"id":"x","choices":[{"index":0,'));
    cut.end();
    expect(cut.endedInsideEvent).toBe(true);
    const whole = new JsonTap();
    whole.push(enc.encode('{"id":"x","choices":[]}'));
    whole.end();
    expect(whole.endedInsideEvent).toBe(false);
  });
});

describe("JsonTap.wholeSoFar: a JSON body whose value has closed", () => {
  it.each([
    ['{"id":"x","choices":[]}', true],
    ['  {"id":"x"}  \n', true],
    ['{"id":"x","choices":[', false],
    ['{"id":"x"} trailing', false],
    ["", false],
  ])("%j → %s", (text, whole) => {
    const tap = new JsonTap();
    tap.push(new TextEncoder().encode(text));
    expect(tap.wholeSoFar()).toBe(whole);
  });
});

describe("SseTap: nothing after data: [DONE], even in the chunk that carried it", () => {
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const token = (t: string) =>
    `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: t } }] })}\n\n`;
  const usage = `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } })}\n\n`;

  it.each([false, true])(
    "one chunk: the answer and [DONE] go on, what follows does not (strip %s)",
    (strip) => {
      const tap = new SseTap(strip);
      const out = tap.push(enc.encode(`${token("Hi")}${usage}data: [DONE]\n\n${token("after")}data: tr`));
      const text = dec.decode(out ?? new Uint8Array());
      expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
      expect(text).toContain("Hi");
      expect(text).not.toContain("after");
      expect(text.includes('"usage"')).toBe(!strip);
      expect(tap.sawDone).toBe(true);
      expect(tap.midEvent).toBe(false);
      expect(tap.end()).toBeNull();
    },
  );

  it("pass-through: [DONE] split over two chunks, the second carrying more: only [DONE]'s own rest goes on", () => {
    const tap = new SseTap(false);
    const first = dec.decode(tap.push(enc.encode(`${token("Hi")}data: [DO`)) ?? new Uint8Array());
    const second = dec.decode(tap.push(enc.encode(`NE]\n\n${token("after")}`)) ?? new Uint8Array());
    expect(first + second).toBe(`${token("Hi")}data: [DONE]\n\n`);
  });

  it("a chunk that ends at [DONE] is handed on as it came", () => {
    const tap = new SseTap(false);
    const chunk = enc.encode(`${token("Hi")}data: [DONE]\n\n`);
    expect(tap.push(chunk)).toBe(chunk);
  });
});
