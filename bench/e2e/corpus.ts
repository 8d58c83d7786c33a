/**
 * Natural text of a chosen token length, for cost measurements where the
 * tokenizer's work must be realistic (the one-token-per-word text of
 * segment-text.ts never exercises BPE merges).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { o200k } from "../../sim/workloads/segment-text";

/**
 * Natural text for tokenization: the README files of the installed packages
 * (English prose, markdown, code — what system prompts and RAG context look
 * like), in sorted order so every run reads the same corpus.
 */
export function corpusTokens(projectDir: string): Uint32Array {
  const root = join(projectDir, "node_modules");
  const parts: string[] = [];
  for (const name of readdirSync(root).sort()) {
    const dirs = name.startsWith("@") ? readdirSync(join(root, name)).map((n) => join(name, n)) : [name];
    for (const d of dirs.sort()) {
      try {
        parts.push(readFileSync(join(root, d, "README.md"), "utf8"));
      } catch {
        // No README in this package.
      }
    }
  }
  return Uint32Array.from(o200k().encode(parts.join("\n\n")));
}

/** Text of `n` corpus tokens starting at `at` (wrapping), decoded back to a string. */
export function corpusText(corpus: Uint32Array, at: number, n: number): string {
  const ids: number[] = new Array(n);
  for (let i = 0; i < n; i++) ids[i] = corpus[(at + i) % corpus.length]!;
  return o200k().decode(ids);
}

/**
 * Streamed chat bodies that share one system prompt of `systemTokens` corpus tokens, each with its own
 * 128-token question (body i), 2 output tokens: what the sequential gateway measurements send.
 */
export function sharedSystemChatBodies(
  corpus: Uint32Array,
  model: string,
  systemTokens: number,
): (i: number) => string {
  const system = corpusText(corpus, 3, systemTokens);
  return (i) =>
    JSON.stringify({
      model,
      messages: [
        { role: "system", content: system },
        { role: "user", content: corpusText(corpus, 60_000 + 131 * i, 128) },
      ],
      max_tokens: 2,
      stream: true,
      stream_options: { include_usage: true },
    });
}
