import { describe, expect, it } from "vitest";
import { endsInsideJson, JsonTap } from "./stream-tap";

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
