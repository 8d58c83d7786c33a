/**
 * Request → prefix keys: the canonical prompt (canonical-prompt.ts) is
 * tokenized with o200k_base (tokenizer.ts) up to `prefixTokens`, through the
 * isolate's memo (tokenizer-memo.ts), and the tokens are folded into chained
 * block keys (block-keys.ts) — the one implementation of the hashing, shared
 * with the simulator and the emulator.
 *
 * Cost is bounded by `prefixTokens`, whatever the request: keying stops at
 * the first of
 *   - `prefixTokens` tokens, or
 *   - MAX_KEYED_CHARS_PER_TOKEN × `prefixTokens` characters of text read by
 *     the tokenizer (a prompt of runs of spaces is ~128 characters a token:
 *     without this, reaching the token cap would mean merging a megabyte);
 * and no single tokenizer step (regex piece, byte-pair merge) or JSON
 * rendering exceeds a constant size. Past that point nothing is tokenized,
 * rendered or fingerprinted: the rest of the request is walked once and
 * counted.
 *
 * `promptTokens` is exact for what was keyed and an ESTIMATE for the rest:
 * untokenized text counts ceil(chars / 4) (OpenAI's rule of thumb for
 * English), structure markers count their ids, media their fixed estimate.
 * It only feeds the router's cost model, which needs the magnitude, not the
 * exact count. `keyed` says where estimation starts. A text the memo holds
 * with more tokens than this request needed counts them all exactly, so
 * `promptTokens` can differ slightly with the memo's state; the keys never do.
 */

import { blockKeysFromTokens, chainSeed, shortPromptKey } from "./block-keys";
import {
  type ChatBody,
  type CompletionsBody,
  type PromptSink,
  writeChatPrompt,
  writeCompletionsPrompt,
} from "./canonical-prompt";
import { runExcessTokens } from "./run-excess";
import { CHARS_PER_TOKEN_ESTIMATE, MAX_KEYED_CHARS_PER_TOKEN } from "./text-estimate";
import { encodeO200k, o200kTokenizer } from "./tokenizer";
import { TokenMemo, type TokenMemoStats } from "./tokenizer-memo";

export type { ChatBody, ChatMessage, CompletionsBody, ContentPart } from "./canonical-prompt";

export interface PrefixOptions {
  /** The model pool: separates key chains across models. */
  readonly model: string;
  /** prompt_cache_key / x-prefix-cache-key: separates tenants' chains. */
  readonly tenant?: string;
  /** Tokens per block (16 like vLLM). */
  readonly blockTokens: number;
  /** Only this many leading tokens are keyed. */
  readonly prefixTokens: number;
}

export interface PrefixKeys {
  /** Chained keys of the full blocks of the keyed tokens. */
  readonly blocks: number[];
  /** Prompt tokens: exact for what was keyed, estimated past it. */
  readonly promptTokens: number;
  /**
   * Of promptTokens, the estimate's count of characters past the keys that continue a run of one repeated
   * character (run-excess.ts): what the count claims and the text may not hold. Only when more than 0.
   */
  readonly unconfirmedTokens?: number;
  /**
   * Only when `blocks` is empty and the prompt has tokens: the key of the
   * whole short prompt (block-keys.ts shortPromptKey), for placement.
   */
  readonly promptKey?: number;
  /** How much of the prompt the keys cover; the rest was only counted. */
  readonly keyed: KeyedExtent;
}

export interface KeyedExtent {
  /** Tokens folded into the keys (at most `prefixTokens`). */
  readonly tokens: number;
  /** Characters of text the tokens came from (the character budget counts these). */
  readonly chars: number;
  /** Segments (texts, markers, id runs) that contributed tokens. */
  readonly segments: number;
}

export { MAX_KEYED_CHARS_PER_TOKEN } from "./text-estimate";

let memo: TokenMemo | undefined;

function isolateMemo(): TokenMemo {
  if (memo === undefined) memo = new TokenMemo(encodeO200k);
  return memo;
}

/** The isolate memo's counters (hit rate, size): for metrics and tests. */
export function prefixMemoStats(): TokenMemoStats {
  return isolateMemo().stats();
}

/** Empties the isolate memo (tests and benchmarks that need a cold memo). */
export function clearPrefixMemo(): void {
  isolateMemo().clear();
}

/**
 * The keying side of the canonical prompt: takes tokens while both budgets
 * (tokens, characters) last, counts everything, and closes for good once
 * either is spent.
 */
class KeyingSink implements PromptSink {
  buf: Uint32Array;
  n = 0;
  promptTokens = 0;
  /** Of promptTokens, estimated for runs of one character past the keys (run-excess.ts). */
  unconfirmedTokens = 0;
  chars = 0;
  segments = 0;
  private charsLeft: number;

  constructor(
    readonly cap: number,
    private readonly memo: TokenMemo,
    /** UTF-16 units the tokenizer may read past where it stops (see BpeTokenizer.lookahead). */
    private readonly lookahead: number,
  ) {
    this.buf = new Uint32Array(Math.min(cap, 4096));
    this.charsLeft = cap * MAX_KEYED_CHARS_PER_TOKEN;
  }

  get open(): boolean {
    return this.n < this.cap && this.charsLeft > 0;
  }

  get renderLimit(): number {
    return this.charsLeft + this.lookahead;
  }

  text(text: string, length = text.length): void {
    if (length === 0) return;
    if (!this.open || text.length === 0) {
      this.estimated(text, length);
      return;
    }
    const e = this.memo.get(text, this.cap - this.n, this.charsLeft);
    this.push(e.tokens);
    this.charsLeft -= e.charsConsumed;
    this.chars += e.charsConsumed;
    this.promptTokens += e.tokens.length + Math.ceil((length - e.charsConsumed) / CHARS_PER_TOKEN_ESTIMATE);
    if (length > e.charsConsumed) this.unconfirmedTokens += runExcessTokens(text, e.charsConsumed);
  }

  counted(text: string): void {
    this.estimated(text, text.length);
  }

  /** `length` characters counted, not keyed: at CHARS_PER_TOKEN_ESTIMATE, and what `text`'s runs claim of them. */
  private estimated(text: string, length: number): void {
    this.promptTokens += Math.ceil(length / CHARS_PER_TOKEN_ESTIMATE);
    this.unconfirmedTokens += runExcessTokens(text);
  }

  unconfirmed(tokens: number): void {
    this.unconfirmedTokens += tokens;
  }

  ids(ids: readonly number[], extraTokens = 0): void {
    if (this.open && ids.length > 0) this.push(ids);
    this.promptTokens += ids.length + extraTokens;
  }

  /** Appends as many of `src` as the token cap allows. */
  private push(src: ArrayLike<number>): void {
    const take = Math.min(src.length, this.cap - this.n);
    if (take === 0) return;
    this.segments++;
    if (this.n + take > this.buf.length) {
      let size = this.buf.length * 2;
      while (size < this.n + take) size *= 2;
      const next = new Uint32Array(Math.min(size, this.cap));
      next.set(this.buf.subarray(0, this.n));
      this.buf = next;
    }
    if (src instanceof Uint32Array) this.buf.set(src.subarray(0, take), this.n);
    else for (let i = 0; i < take; i++) this.buf[this.n + i] = src[i]!;
    this.n += take;
  }
}

/**
 * The routing key of one OpenAI request. The body must already be validated
 * (the Worker's zod schemas); fields this function does not know are ignored.
 */
export function prefixKeysForRequest(
  kind: "chat" | "completions",
  body: ChatBody | CompletionsBody,
  opts: PrefixOptions,
): PrefixKeys {
  if (!Number.isInteger(opts.prefixTokens) || opts.prefixTokens < 0)
    throw new RangeError(`prefixTokens must be a non-negative integer, got ${opts.prefixTokens}`);
  const sink = new KeyingSink(opts.prefixTokens, isolateMemo(), o200kTokenizer().lookahead);
  if (kind === "chat") {
    if (!("messages" in body)) throw new TypeError("chat request without messages");
    writeChatPrompt(body, sink);
  } else {
    if (!("prompt" in body)) throw new TypeError("completions request without prompt");
    writeCompletionsPrompt(body, sink);
  }
  const tokens = sink.buf.subarray(0, sink.n);
  const seed = chainSeed(opts.model, opts.tenant);
  const blocks = blockKeysFromTokens(tokens, seed, opts.blockTokens, opts.prefixTokens);
  return {
    blocks,
    promptTokens: sink.promptTokens,
    ...(sink.unconfirmedTokens > 0 ? { unconfirmedTokens: sink.unconfirmedTokens } : {}),
    ...(blocks.length === 0 && sink.n > 0 ? { promptKey: shortPromptKey(tokens, seed) } : {}),
    keyed: { tokens: sink.n, chars: sink.chars, segments: sink.segments },
  };
}
