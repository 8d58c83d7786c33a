import { describe, expect, it } from "vitest";
import { memberValueSpans, replaceMemberValue } from "./json-members";

const valuesOf = (text: string, name: string) =>
  memberValueSpans(text, name).map((s) => text.slice(s.start, s.end));

describe("memberValueSpans", () => {
  it("finds top-level values of every kind, never a nested member of the same name", () => {
    const text = ` { "a" : {"x":{"x":1}} , "x" :[1,{"x":2},"]"], "s":"x\\"}{,", "n": -1.5e+3 ,"t":true,"z":null , "x":"end"} `;
    expect(valuesOf(text, "x")).toEqual([`[1,{"x":2},"]"]`, `"end"`]);
    expect(valuesOf(text, "a")).toEqual([`{"x":{"x":1}}`]);
    expect(valuesOf(text, "s")).toEqual([`"x\\"}{,"`]);
    expect(valuesOf(text, "n")).toEqual(["-1.5e+3"]);
    expect(valuesOf(text, "z")).toEqual(["null"]);
    expect(valuesOf(text, "nope")).toEqual([]);
    expect(valuesOf("{}", "x")).toEqual([]);
  });

  it("reads keys as a parser does (escapes decoded), and strings ending in a run of backslashes", () => {
    const text = `{"k\\u0065y":"a\\\\","key":"b\\\\\\"c","q":"\\\\"}`;
    expect(valuesOf(text, "key")).toEqual([`"a\\\\"`, `"b\\\\\\"c"`]);
    expect(valuesOf(text, "q")).toEqual([`"\\\\"`]);
  });
});

describe("replaceMemberValue", () => {
  it("replaces every copy and leaves each other byte alone", () => {
    const text = `{"seed":9223372036854775807,"o":{"a":false}, "o" : null,"p":1.0}`;
    const out = replaceMemberValue(text, "o", `{"b":true}`);
    expect(out).toBe(`{"seed":9223372036854775807,"o":{"b":true}, "o" : {"b":true},"p":1.0}`);
  });
});
