/**
 * Real text for the tokenizer benchmarks: the READMEs of installed packages
 * (prose, Markdown, shell and code samples) and TypeScript's lib.es5.d.ts
 * (doc comments and declarations) — text nobody tuned for our tokenizer.
 * A prompt of N tokens is a window of this text starting at a chosen
 * offset, so distinct offsets give distinct prompts (memo misses).
 */
import { readFileSync } from "node:fs";
import { encodeO200k } from "../../src/prefix/tokenizer";

const SOURCES = [
  "node_modules/openai/README.md",
  "node_modules/miniflare/README.md",
  "node_modules/zod/README.md",
  "node_modules/hono/README.md",
  "node_modules/chai/README.md",
  "node_modules/sharp/README.md",
  "node_modules/wrangler/README.md",
  "node_modules/typescript/lib/lib.es5.d.ts",
];

let corpus: string | undefined;

/** All sources, concatenated (about 320 KB, ~80k o200k tokens). */
export function benchCorpus(): string {
  if (corpus === undefined) corpus = SOURCES.map((p) => readFileSync(p, "utf8")).join("\n\n");
  return corpus;
}

/** A text of `tokens` o200k tokens (give or take the last piece), read from the corpus at `offset` chars, wrapping around. */
export function textOfTokens(tokens: number, offset: number): string {
  const c = benchCorpus();
  const chars = tokens * 8; // o200k averages ~4 chars/token on this text: twice that is plenty
  let s = "";
  let at = offset % c.length;
  while (s.length < chars) {
    s += c.slice(at, at + chars - s.length);
    at = 0;
  }
  // Tokenization can stop at `tokens`; the text it consumed is exactly those tokens.
  return s.slice(0, encodeO200k(s, tokens).charsConsumed);
}
