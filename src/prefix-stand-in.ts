/**
 * TEMPORARY stand-in for src/prefix.ts (being written in parallel): same
 * signature, crude tokens (one per whitespace-separated word, hashed to 32
 * bits) instead of js-tiktoken. Removed as soon as prefix.ts lands; only the
 * gateway's own wiring uses it.
 */
import type { ChatBody, CompletionsBody, InferenceBody, InferenceKind } from "./openai-schemas";
import { blockKeysFromTokens, chainSeed } from "./routing/prefix-keys";

function wordHash(w: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function canonicalText(kind: InferenceKind, body: InferenceBody): string {
  if (kind === "completions") return JSON.stringify((body as CompletionsBody).prompt);
  return (body as ChatBody).messages
    .map((m) => `${m.role}\n${typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? "")}`)
    .join("\n");
}

export function prefixKeysForRequest(
  kind: InferenceKind,
  body: InferenceBody,
  opts: { model: string; tenant?: string; blockTokens: number; prefixTokens: number },
): { blocks: number[]; promptTokens: number } {
  const words = canonicalText(kind, body).split(/\s+/).filter(Boolean);
  const tokens = words.map(wordHash);
  return {
    blocks: blockKeysFromTokens(
      tokens,
      chainSeed(opts.model, opts.tenant),
      opts.blockTokens,
      opts.prefixTokens,
    ),
    promptTokens: tokens.length,
  };
}
