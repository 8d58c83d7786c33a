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
 * its time goes, so the emulator should not spend long on it either. Two
 * things keep one prompt's cost linear in its text and bounded whatever the
 * text, so one request cannot stall every other stream this process serves:
 *
 * - this tokenizer remembers long pieces (`memoPieces`): the encoder cuts a
 *   run of one character into identical pieces, merged once (3.5 M spaces
 *   were ~3,400 merges of the same 1,024-space piece, 1.7–16 s);
 * - callers pass a token limit (the engine's max_model_len + 1): encoding
 *   stops at the first piece past it, so a prompt the engine will refuse
 *   costs at most a context's worth of tokens, never its whole body.
 */
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { blockKeysFromTokens, chainSeed } from "../../src/prefix/block-keys";
import { BpeTokenizer, MAX_PIECE_RUN } from "../../src/prefix/tokenizer";

/** Long pieces remembered (each ≤ MAX_PIECE_RUN code points and its tokens: ≤ ~3 MB in all). */
const MEMO_PIECES = 1024;
/** Whole texts remembered, and their tokens in all; cleared wholesale when either is reached. */
const MEMO_MAX = 4096;
const MEMO_MAX_TOKENS = 4_000_000;

let tokenizer: BpeTokenizer | undefined;
const memo = new Map<string, readonly number[]>();
let memoTokens = 0;

/** The emulator's o200k tokenizer (its own instance: the shared one has no piece memo). */
export function emulatorTokenizer(): BpeTokenizer {
  tokenizer ??= new BpeTokenizer(o200kBase, MAX_PIECE_RUN, { memoPieces: MEMO_PIECES });
  return tokenizer;
}

/** Builds the o200k encoder now rather than on the first request. */
export function warmTokenizer(): void {
  emulatorTokenizer();
}

/** A prompt's token ids; when `complete` is false, only its first ones (more than the limit asked for). */
export interface PromptTokens {
  readonly tokens: readonly number[];
  readonly complete: boolean;
}

/**
 * Token ids of `text`, special-token text treated as plain text (never rejected). With a limit, stops
 * at the first piece where more than `limit` tokens exist: the text is then longer than that, and
 * `complete` is false.
 */
export function encodeText(text: string, limit = Number.POSITIVE_INFINITY): PromptTokens {
  const hit = memo.get(text);
  if (hit !== undefined) return { tokens: hit, complete: true };
  const enc = emulatorTokenizer().encode(text, limit + 1);
  if (!enc.complete) return { tokens: enc.tokens, complete: false };
  if (memo.size >= MEMO_MAX || memoTokens + enc.tokens.length > MEMO_MAX_TOKENS) {
    memo.clear();
    memoTokens = 0;
  }
  if (enc.tokens.length <= MEMO_MAX_TOKENS) {
    memo.set(text, enc.tokens);
    memoTokens += enc.tokens.length;
  }
  return { tokens: enc.tokens, complete: true };
}

export interface ChatMessageLike {
  readonly role: string;
  readonly content: string | null;
}

/** Concatenated tokens of the messages' canonical text, in order; stops past `limit` tokens as encodeText does. */
export function chatPromptTokens(
  messages: readonly ChatMessageLike[],
  limit = Number.POSITIVE_INFINITY,
): PromptTokens {
  const out: number[] = [];
  for (const m of messages) {
    const { tokens, complete } = encodeText(`${m.role}: ${m.content ?? ""}\n`, limit - out.length);
    for (let i = 0; i < tokens.length; i++) out.push(tokens[i]!);
    if (!complete || out.length > limit) return { tokens: out, complete: false };
  }
  return { tokens: out, complete: true };
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
