import { describe, expect, it } from "vitest";
import { o200k, segmentsText, segmentText, singleTokenWords } from "./segment-text";

describe("segment text", () => {
  it("has a large vocabulary of single-token words", () => {
    const words = singleTokenWords();
    expect(words.length).toBeGreaterThan(5000);
    for (const w of words.slice(0, 50)) expect(o200k().encode(w)).toHaveLength(1);
  });

  it("gives exactly one o200k token per segment token", () => {
    const segs = [
      { key: "system:7", tokens: 300 },
      { key: "q:7:3", tokens: 128 },
    ];
    expect(o200k().encode(segmentsText(segs))).toHaveLength(428);
    expect(o200k().encode(segmentText({ key: "x", tokens: 1 }))).toHaveLength(1);
    expect(segmentText({ key: "x", tokens: 0 })).toBe("");
  });

  it("gives shared token prefixes to shared segments and different text to different keys", () => {
    const enc = o200k();
    const a = enc.encode(
      segmentsText([
        { key: "sys", tokens: 200 },
        { key: "qa", tokens: 50 },
      ]),
    );
    const b = enc.encode(
      segmentsText([
        { key: "sys", tokens: 200 },
        { key: "qb", tokens: 50 },
      ]),
    );
    expect(a.slice(0, 200)).toEqual(b.slice(0, 200));
    let firstDiff = 200;
    while (firstDiff < 250 && a[firstDiff] === b[firstDiff]) firstDiff++;
    expect(firstDiff).toBeLessThan(205);
  });

  it("is deterministic and a segment's text is a prefix of a longer one with the same key", () => {
    const short = segmentText({ key: "k", tokens: 40 });
    const long = segmentText({ key: "k", tokens: 90 });
    expect(long.startsWith(short)).toBe(true);
    expect(segmentText({ key: "k", tokens: 40 })).toBe(short);
  });
});
