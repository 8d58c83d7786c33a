import { readFileSync } from "node:fs";
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { beforeAll, describe, expect, it } from "vitest";
import { BpeTokenizer, encodeO200k } from "../../src/prefix/tokenizer";
import { SMALL_PIECE_BYTES } from "../../src/prefix/tokenizer-bpe";
import { BpeVocab } from "../../src/prefix/tokenizer-vocab";
import { prose, tokenizerCorpus } from "./tokenizer-corpus";

let reference: Tiktoken;

beforeAll(() => {
  reference = new Tiktoken(o200kBase);
}, 60_000);

/** js-tiktoken with special tokens treated as text: the behaviour we promise to match. */
function ref(text: string): number[] {
  return reference.encode(text, [], []);
}

/** Real prose and code from installed packages' READMEs: text nobody wrote for this test. */
function readmes(): string[] {
  const out: string[] = [];
  for (const pkg of [
    "hono",
    "openai",
    "zod",
    "js-tiktoken",
    "esbuild",
    "vitest",
    "typescript",
    "miniflare",
  ]) {
    for (const f of ["README.md", "readme.md"]) {
      try {
        out.push(readFileSync(`node_modules/${pkg}/${f}`, "utf8"));
        break;
      } catch {
        // not every package ships one
      }
    }
  }
  return out;
}

describe("o200k tokenizer", () => {
  it("is not built at import, only on first use", async () => {
    // A fresh instance of the module, whatever an earlier test file has loaded: the node project runs its files in
    // one worker, sharing their modules (vitest.config.ts); a query makes this one a module of its own.
    const fresh = (await import(
      /* @vite-ignore */ `../../src/prefix/tokenizer.ts?fresh=${Date.now()}`
    )) as typeof import("../../src/prefix/tokenizer");
    expect(fresh.o200kLoaded()).toBe(false);
    expect(fresh.o200kTokenizer().vocabSize).toBe(199_998);
    expect(fresh.o200kLoaded()).toBe(true);
  });

  it("matches js-tiktoken token for token on the corpus", () => {
    const corpus = tokenizerCorpus();
    expect(corpus.length).toBeGreaterThan(200);
    for (const text of corpus)
      expect(encodeO200k(text).tokens, JSON.stringify(text.slice(0, 60))).toEqual(ref(text));
  });

  it("matches js-tiktoken on real READMEs (prose, code, tables)", () => {
    const docs = readmes();
    expect(docs.length).toBeGreaterThanOrEqual(4);
    let tokens = 0;
    for (const text of docs) {
      const mine = encodeO200k(text).tokens;
      expect(mine).toEqual(ref(text));
      tokens += mine.length;
    }
    expect(tokens).toBeGreaterThan(10_000);
  });

  it("matches js-tiktoken on long single pieces (heap path) of every size around the threshold", () => {
    for (const unit of ["=", "长", "😀", "ab", "!?", "é"]) {
      for (const n of [SMALL_PIECE_BYTES - 1, SMALL_PIECE_BYTES, SMALL_PIECE_BYTES + 1, 200, 700]) {
        const text = unit.repeat(Math.ceil(n / new TextEncoder().encode(unit).length));
        expect(encodeO200k(text).tokens, `${unit} x ${text.length}`).toEqual(ref(text));
      }
    }
    // A CJK paragraph: one regex piece of ~1.5 KB.
    const cjk = "我们在边缘计算节点上对提示词进行分词以便路由".repeat(24);
    expect(encodeO200k(cjk).tokens).toEqual(ref(cjk));
  });

  it("stops at maxTokens on a piece boundary, with exactly the leading tokens", () => {
    const text = prose(3, 3000);
    const all = ref(text);
    for (const cap of [0, 1, 15, 16, 100, 1000, all.length - 1, all.length, all.length + 5]) {
      const e = encodeO200k(text, cap);
      expect(e.tokens.length).toBeGreaterThanOrEqual(Math.min(cap, all.length));
      expect(e.tokens).toEqual(all.slice(0, e.tokens.length));
      expect(e.complete).toBe(e.tokens.length === all.length);
      // What was consumed tokenizes to exactly what was returned (pieces are independent).
      expect(ref(text.slice(0, e.charsConsumed))).toEqual(e.tokens);
    }
  });

  it("keeps a long CJK run linear, not quadratic", () => {
    // A 90 KB run with no break: cut into pieces of MAX_PIECE_RUN code points (~3 KB), each merged by the heap.
    const text = "这是一个很长的中文段落没有空格".repeat(2000);
    const t0 = performance.now();
    const tokens = encodeO200k(text).tokens;
    const ms = performance.now() - t0;
    expect(tokens.length).toBeGreaterThan(10_000);
    expect(ms).toBeLessThan(2_000); // js-tiktoken's rescan would need ~10^9 pair lookups here
  });

  it("rejects rank data it does not understand instead of mis-ranking", () => {
    expect(() => new BpeVocab("! 5 IQ== Ig==")).toThrow(/start at 0/);
    expect(() => new BpeVocab("! 0 IQ==\n! 1 Ig==")).toThrow(/layout/);
    expect(() => new BpeVocab("garbage")).toThrow(/layout/);
  });

  it("works for another js-tiktoken-shaped vocabulary (a tiny one built here)", () => {
    // Ranks: the 256 bytes, then "ab" (256) and "abc" (257).
    const b64 = (bytes: number[]) => btoa(String.fromCharCode(...bytes));
    const tokens = Array.from({ length: 256 }, (_, i) => b64([i]));
    tokens.push(b64([97, 98]), b64([97, 98, 99]));
    const tiny = new BpeTokenizer({
      pat_str: "\\S+|\\s+",
      special_tokens: {},
      bpe_ranks: `! 0 ${tokens.join(" ")}`,
    });
    expect(tiny.vocabSize).toBe(258);
    expect(tiny.encode("abc abd").tokens).toEqual([257, 32, 256, 100]);
  });
});
