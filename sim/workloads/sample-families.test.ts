import { describe, expect, it } from "vitest";
import {
  commonPrefixLength,
  formatRate,
  parseSampleRate,
  sampleFamilies,
  sampleWorkloadFamilies,
} from "./sample-families";
import { parseTrace } from "./trace-file";
import type { Segment, WorkloadRequest } from "./types";

function req(arrivalMs: number, keys: readonly string[], tenant?: string): WorkloadRequest {
  const segments: Segment[] = keys.map((key) => ({ key, tokens: 16 }));
  return {
    arrivalMs,
    promptTokens: 16 * keys.length,
    outputTokens: 8,
    ...(tenant !== undefined ? { tenant } : {}),
    prompt: { kind: "segments", segments },
  };
}

/** `families` families under one system prompt, each with 1..4 turns growing the history. */
function manyFamilies(families: number): WorkloadRequest[] {
  const out: WorkloadRequest[] = [];
  let t = 0;
  for (let f = 0; f < families; f++) {
    const turns = 1 + (f % 4);
    for (let k = 1; k <= turns; k++)
      out.push(req(t++, ["sys", `conv${f}`, ...Array.from({ length: k }, (_, j) => `conv${f}/turn${j}`)]));
  }
  return out;
}

function familyOf(r: WorkloadRequest): string {
  if (r.prompt.kind !== "segments") throw new Error("segments expected");
  return r.prompt.segments[1]!.key;
}

describe("sampleFamilies", () => {
  const w = manyFamilies(8000);

  it("is deterministic for a seed, and the seed matters", () => {
    const a = sampleFamilies(w, 0.25, 7);
    const b = sampleFamilies(w, 0.25, 7);
    expect(a.requests).toEqual(b.requests);
    const c = sampleFamilies(w, 0.25, 8);
    expect(c.requests.map(familyOf)).not.toEqual(a.requests.map(familyOf));
  });

  it("rate 1 returns every request in order", () => {
    const s = sampleFamilies(w, 1, 3);
    expect(s.requests).toEqual(w);
    expect(s.families).toBe(8000);
    expect(s.keptFamilies).toBe(8000);
  });

  it("keeps a fraction of families near the rate, for several rates and seeds", () => {
    for (const rate of [0.5, 0.25, 0.1])
      for (const seed of [1, 2, 3]) {
        const s = sampleFamilies(w, rate, seed);
        expect(s.families).toBe(8000);
        // Binomial(8000, rate): 4 standard deviations is at most 0.0224 of the families.
        expect(Math.abs(s.keptFamilies / s.families - rate)).toBeLessThan(0.0224);
        expect(new Set(s.requests.map(familyOf)).size).toBe(s.keptFamilies);
      }
  });

  it("keeps or drops whole families, order and arrival times preserved", () => {
    const s = sampleFamilies(w, 0.3, 11);
    const kept = new Set(s.requests.map(familyOf));
    expect(s.requests).toEqual(w.filter((r) => kept.has(familyOf(r))));
  });

  it("samples on the first key past the longest prefix common to all requests", () => {
    // Common prefix [a, b]: families are c and d (the key after it), not a.
    const two = [req(0, ["a", "b", "c", "x"]), req(1, ["a", "b", "d"]), req(2, ["a", "b", "c", "y"])];
    const rates = [0.5, 0.25, 0.75];
    for (const seed of [1, 2, 3, 4, 5, 6])
      for (const rate of rates) {
        const s = sampleFamilies(two, rate, seed);
        expect(s.families).toBe(2);
        const c = s.requests.filter((r) => r !== two[1]).length;
        expect(c === 0 || c === 2).toBe(true);
      }
    // A request that is all common prefix is its own family.
    const short = [req(0, ["a", "b"]), req(1, ["a", "b", "c"]), req(2, ["a", "b", "d"])];
    expect(sampleFamilies(short, 1, 1).families).toBe(3);
  });

  it("tenants are separate families: their caches never mix", () => {
    const t = [req(0, ["s", "q"], "t1"), req(1, ["s", "q"], "t2"), req(2, ["s", "q"], "t1")];
    expect(sampleFamilies(t, 1, 1).families).toBe(2);
  });

  it("rejects rates outside (0, 1] and token-id prompts, naming the workload", () => {
    expect(() => sampleFamilies(w, 0, 1)).toThrow(/\(0, 1\]/);
    expect(() => sampleFamilies(w, 1.5, 1)).toThrow(/\(0, 1\]/);
    expect(() => sampleFamilies(w, Number.NaN, 1)).toThrow(/\(0, 1\]/);
    const tok: WorkloadRequest = {
      arrivalMs: 0,
      promptTokens: 3,
      outputTokens: 1,
      prompt: { kind: "tokens", tokens: new Uint32Array([1, 2, 3]) },
    };
    expect(() => sampleFamilies([tok], 0.5, 1, 'workload "log.jsonl"')).toThrow(
      /request 0 of workload "log.jsonl".*OpenAI request log/,
    );
  });

  it("returns nothing for an empty workload", () => {
    expect(sampleFamilies([], 0.5, 1)).toEqual({ requests: [], families: 0, keptFamilies: 0 });
  });
});

describe("commonPrefixLength", () => {
  const p = (...keys: string[]): Segment[] => keys.map((key) => ({ key, tokens: 1 }));
  it("finds the longest key run shared by all prompts", () => {
    expect(commonPrefixLength([p("a", "b", "c"), p("a", "b", "d"), p("a", "b")])).toBe(2);
    expect(commonPrefixLength([p("a", "b"), p("x")])).toBe(0);
    expect(commonPrefixLength([p("a", "b")])).toBe(2);
    expect(commonPrefixLength([])).toBe(0);
  });
});

describe("sampleWorkloadFamilies on a Mooncake-format trace", () => {
  it("keys families on hash_ids[1] behind the shared block 0 and describes the sample", async () => {
    const lines = [
      { timestamp: 0, input_length: 1000, output_length: 5, hash_ids: [0, 10] },
      { timestamp: 5, input_length: 1500, output_length: 5, hash_ids: [0, 11, 12] },
      { timestamp: 9, input_length: 2000, output_length: 5, hash_ids: [0, 10, 13, 14] },
    ];
    const w = await parseTrace(lines.map((l) => JSON.stringify(l)).join("\n"), { name: "mc" });
    const s = sampleWorkloadFamilies(w, 1, 1);
    expect(s.workload.requests).toHaveLength(3);
    expect(s.workload.blockTokens).toBe(512);
    expect(s.description).toBe("families sampled at 1 (2 of 2 kept, SHARDS)");
  });
});

describe("rate parsing and formatting", () => {
  it("reads decimals and fractions, rejects the rest", () => {
    expect(parseSampleRate("0.25")).toBe(0.25);
    expect(parseSampleRate("1/4")).toBe(0.25);
    expect(parseSampleRate(" 1 / 2 ")).toBe(0.5);
    for (const bad of ["0", "2", "-0.5", "", "abc", "1/0", "4/1"])
      expect(() => parseSampleRate(bad)).toThrow();
  });
  it("prints reciprocals of integers as fractions", () => {
    expect(formatRate(0.25)).toBe("1/4");
    expect(formatRate(0.5)).toBe("1/2");
    expect(formatRate(0.3)).toBe("0.3");
    expect(formatRate(1)).toBe("1");
  });
});
