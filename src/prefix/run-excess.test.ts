/**
 * The part of a past-window estimate only the estimate claims (run-excess.ts), and the Worker's count
 * carrying it (request-keys.ts): a prompt padded with a run of one character says so; prose and code do not.
 */
import { describe, expect, it } from "vitest";
import { MAX_KEYED_CHARS_PER_TOKEN, prefixKeysForRequest } from "./request-keys";
import { ORDINARY_RUN_CHARS, runExcessTokens } from "./run-excess";

const opts = { model: "m", blockTokens: 16, prefixTokens: 1024 };
const chat = (content: string) =>
  prefixKeysForRequest("chat", { messages: [{ role: "user", content }] }, opts);
const prose = "The gateway routes each request to the backend that holds its prefix, when it can. ";

describe("runExcessTokens", () => {
  it("is the Worker's own edge of ordinary text", () => {
    expect(ORDINARY_RUN_CHARS).toBe(MAX_KEYED_CHARS_PER_TOKEN);
  });

  it("claims a run's characters past the first eight, 4 a token", () => {
    expect(runExcessTokens(" ".repeat(8))).toBe(0);
    expect(runExcessTokens(" ".repeat(12))).toBe(1);
    expect(runExcessTokens(`x${"-".repeat(408)}y${"=".repeat(8)}`)).toBe(100);
    expect(runExcessTokens(" ".repeat(1_000_000))).toBe(249_998);
  });

  it("finds a run wherever it starts and however long it is (it reads one character in four)", () => {
    for (let at = 0; at < 8; at++)
      for (let len = 1; len <= 40; len++) {
        const text = `${"ab".repeat(8).slice(0, at)}${"-".repeat(len)}${"=".repeat(len)}ab`;
        expect(runExcessTokens(text), `at ${at}, ${len}`).toBe(Math.floor((2 * Math.max(0, len - 8)) / 4));
        expect(runExcessTokens(text, at + 1), `from ${at + 1}, ${len}`).toBe(
          Math.floor((Math.max(0, len - 9) + Math.max(0, len - 8)) / 4),
        );
      }
  });

  it("reads about one character in two of prose and fewer than two reads a character of any text (a period of four was read four times over)", () => {
    /** How many characters runExcessTokens reads of `text` (a string's charCodeAt, counted). */
    const reads = (text: string) => {
      let n = 0;
      const counted = {
        length: text.length,
        charCodeAt: (i: number) => {
          n++;
          return text.charCodeAt(i);
        },
      };
      const tokens = runExcessTokens(counted as unknown as string);
      expect(tokens).toBe(runExcessTokens(text));
      return n;
    };
    const size = 40_000;
    expect(reads(prose.repeat(size / prose.length))).toBeLessThan(0.7 * size);
    // A period of the probes' stride: every probe pair is equal, and no run is longer than one character.
    for (const period of ["abcd", "ab", "aaab", "abcdabcd"])
      expect(reads(period.repeat(size / period.length)), period).toBeLessThan(1.6 * size);
  });

  it("agrees with a plain scan on texts of few letters", () => {
    const plain = (t: string, from: number) => {
      let excess = 0;
      for (let i = from; i < t.length; ) {
        let j = i;
        while (j < t.length && t[j] === t[i]) j++;
        excess += Math.max(0, j - i - ORDINARY_RUN_CHARS);
        i = j;
      }
      return Math.floor(excess / 4);
    };
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let k = 0; k < 3000; k++) {
      let t = "";
      const runs = 1 + Math.floor(next() * 12);
      for (let r = 0; r < runs; r++) t += "ab-"[Math.floor(next() * 3)]!.repeat(1 + Math.floor(next() * 14));
      const from = Math.floor(next() * 6);
      expect(runExcessTokens(t, from), JSON.stringify([t, from])).toBe(plain(t, from));
    }
  });

  it("reads from `from` on", () => {
    const text = `${" ".repeat(1000)}${prose}`;
    expect(runExcessTokens(text, 1000)).toBe(0);
    expect(runExcessTokens(text, 500)).toBe(123);
  });

  it("claims nothing of prose, and never more than the estimate of what it reads", () => {
    expect(runExcessTokens(prose.repeat(1000))).toBe(0);
    for (const text of ["ab".repeat(5000), "a".repeat(9), "\u00a0".repeat(77)])
      expect(runExcessTokens(text)).toBeLessThanOrEqual(Math.ceil(text.length / 4));
  });
});

describe("the Worker's count", () => {
  it("says which part of ~1 MB of spaces past the keys it cannot vouch for", () => {
    const r = chat(prose.repeat(200) + " ".repeat(1_000_000));
    expect(r.keyed.tokens).toBe(opts.prefixTokens);
    expect(r.unconfirmedTokens).toBe(249_998);
    expect(r.promptTokens).toBeGreaterThan(250_000);
  });

  it("says so of a /v1/completions batch's later prompt too (the keys follow only the first)", () => {
    // The same ~1 MB of spaces as the second prompt of a batch is counted as load all the same (~250,000):
    // unclaimed, it was evicted for at route, as index-wipe-2 stopped a single prompt's from being.
    const r = prefixKeysForRequest(
      "completions",
      { prompt: [prose.repeat(200), " ".repeat(1_000_000)] },
      opts,
    );
    expect(r.promptTokens).toBeGreaterThan(250_000);
    expect(r.unconfirmedTokens).toBe(249_998);
    const prose2 = prefixKeysForRequest("completions", { prompt: [prose, prose.repeat(2000)] }, opts);
    expect(prose2.unconfirmedTokens).toBeUndefined();
  });

  it("says so of a tool's description past the keys, read or only measured (JSON values)", () => {
    const padded = { type: "function", function: { name: "f", description: " ".repeat(1_000_000) } };
    const withTools = (system: string) =>
      prefixKeysForRequest(
        "chat",
        {
          messages: [
            { role: "system", content: system },
            { role: "user", content: "go" },
          ],
          tools: [padded],
        },
        opts,
      );
    // The window open when the tools come (rendered up to its edge), and closed before them (measured only).
    for (const system of ["short", prose.repeat(200)]) {
      const r = withTools(system);
      expect(r.promptTokens, system.length.toString()).toBeGreaterThan(240_000);
      // All of the estimate's count of the padding but its first 8 characters and what the window read.
      expect(r.unconfirmedTokens, system.length.toString()).toBeGreaterThan(r.promptTokens - 10_000);
      expect(r.unconfirmedTokens, system.length.toString()).toBeLessThanOrEqual(249_998);
    }
    const plain = { type: "function", function: { name: "f", description: prose.repeat(2000) } };
    const r = prefixKeysForRequest(
      "chat",
      { messages: [{ role: "user", content: "go" }], tools: [plain] },
      opts,
    );
    expect(r.unconfirmedTokens).toBeUndefined();
  });

  it("claims nothing of a run the key window tokenized, nor of prose past it", () => {
    expect(chat(" ".repeat(4000)).unconfirmedTokens).toBeUndefined();
    const long = chat(prose.repeat(2000));
    expect(long.promptTokens).toBeGreaterThan(opts.prefixTokens);
    expect(long.unconfirmedTokens).toBeUndefined();
  });
});
