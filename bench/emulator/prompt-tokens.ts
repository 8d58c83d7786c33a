/**
 * The emulated engine's view of a prompt: canonical text → o200k token ids →
 * chained block keys, the way a real engine hashes its KV blocks. The engine
 * does not know the gateway's tenant keys; like vLLM it isolates caches only
 * by the request's `cache_salt` (folded into the chain seed here).
 *
 * Chat prompts are tokenized message by message ("role: content\n" each) and
 * concatenated, so a conversation that grows turn by turn keeps an identical
 * token prefix, as a chat template gives a real engine. Each message's tokens
 * are memoized: long shared system prompts are tokenized once.
 *
 * The BPE is the typed-array o200k encoder (src/prefix/tokenizer.ts), which
 * test/node/tokenizer.test.ts holds token-for-token identical to js-tiktoken:
 * about twice as fast, and an engine's tokenizer (Rust in vLLM) is not where
 * its time goes, so the emulator should not spend long on it either.
 */
import { blockKeysFromTokens, chainSeed } from "../../src/prefix/block-keys";
import { encodeO200k, o200kTokenizer } from "../../src/prefix/tokenizer";

const memo = new Map<string, readonly number[]>();
/** Bounds the memo; cleared wholesale when full (simple, and rarely hit in a bench run). */
const MEMO_MAX = 4096;

/** Builds the o200k encoder now rather than on the first request. */
export function warmTokenizer(): void {
  o200kTokenizer();
}

/** Token ids of `text`, special-token text treated as plain text (never rejected). */
export function encodeText(text: string): readonly number[] {
  const hit = memo.get(text);
  if (hit !== undefined) return hit;
  const ids = encodeO200k(text).tokens;
  if (memo.size >= MEMO_MAX) memo.clear();
  memo.set(text, ids);
  return ids;
}

export interface ChatMessageLike {
  readonly role: string;
  readonly content: string | null;
}

/** Concatenated tokens of the messages' canonical text, in order. */
export function chatPromptTokens(messages: readonly ChatMessageLike[]): number[] {
  const out: number[] = [];
  for (const m of messages) {
    const ids = encodeText(`${m.role}: ${m.content ?? ""}\n`);
    for (let i = 0; i < ids.length; i++) out.push(ids[i]!);
  }
  return out;
}

/** Block keys of a prompt for `model`, isolated by `cacheSalt` when given. */
export function promptBlocks(
  tokens: ArrayLike<number>,
  model: string,
  blockTokens: number,
  cacheSalt?: string,
): number[] {
  return blockKeysFromTokens(tokens, chainSeed(model, cacheSalt), blockTokens);
}
