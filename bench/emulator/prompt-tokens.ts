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
 */
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { blockKeysFromTokens, chainSeed } from "../../src/routing/prefix-keys";

let encoder: Tiktoken | undefined;
const memo = new Map<string, readonly number[]>();
/** Bounds the memo; cleared wholesale when full (simple, and rarely hit in a bench run). */
const MEMO_MAX = 4096;

function encoderOnce(): Tiktoken {
  encoder ??= new Tiktoken(o200kBase);
  return encoder;
}

/** Builds the o200k encoder now (seconds on a busy machine) rather than on the first request. */
export function warmTokenizer(): void {
  encoderOnce();
}

/** Token ids of `text`, special-token text treated as plain text (never rejected). */
export function encodeText(text: string): readonly number[] {
  const hit = memo.get(text);
  if (hit !== undefined) return hit;
  const ids = encoderOnce().encode(text, [], []);
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
