/**
 * Request → prefix keys: the canonical prompt (prefix-canonical.ts) is
 * tokenized with o200k_base (tokenizer.ts) up to `prefixTokens`, through the
 * isolate's memo (tokenizer-memo.ts), and the tokens are folded into chained
 * block keys by the routing core — the one implementation of the hashing,
 * shared with the RouterDO and the simulator.
 *
 * Cost: only the first `prefixTokens` tokens are ever computed. Past the cap
 * `promptTokens` is an ESTIMATE (untokenized text counts ceil(chars / 4),
 * OpenAI's rule of thumb for English); it only feeds the router's cost model,
 * which needs the magnitude, not the exact count.
 */
import {
  type ChatBody,
  type CompletionsBody,
  chatSegments,
  completionsSegments,
  type Segment,
} from "./prefix-canonical";
import { blockKeysFromTokens, chainSeed } from "./routing/prefix-keys";
import { encodeO200k } from "./tokenizer";
import { TokenMemo, type TokenMemoStats } from "./tokenizer-memo";

export type { ChatBody, ChatMessage, CompletionsBody, ContentPart } from "./prefix-canonical";

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
  /** Chained keys of the full blocks of the first `prefixTokens` tokens. */
  readonly blocks: number[];
  /** Prompt tokens: exact up to the cap, estimated past it. */
  readonly promptTokens: number;
}

/** Characters per token for text that was not tokenized (past the cap). */
const CHARS_PER_TOKEN_ESTIMATE = 4;

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

/** Up to `cap` tokens, in one growable typed array. */
class TokenSink {
  buf: Uint32Array;
  n = 0;

  constructor(readonly cap: number) {
    this.buf = new Uint32Array(Math.min(cap, 4096));
  }

  get room(): number {
    return this.cap - this.n;
  }

  /** Appends up to `room` of src[0, len); returns how many were taken. */
  push(src: ArrayLike<number>, len: number): number {
    const take = Math.min(len, this.room);
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
    return take;
  }
}

/** Tokens of the segments, capped; returns the prompt-token count (exact below the cap, estimated past it). */
function collect(segments: readonly Segment[], sink: TokenSink, m: TokenMemo): number {
  let total = 0;
  for (const seg of segments) {
    if (seg.kind === "text") {
      if (seg.text.length === 0) continue;
      if (sink.room === 0) {
        total += Math.ceil(seg.text.length / CHARS_PER_TOKEN_ESTIMATE);
        continue;
      }
      const e = m.get(seg.text, sink.room);
      sink.push(e.tokens, e.tokens.length);
      total += e.tokens.length + Math.ceil((seg.text.length - e.charsConsumed) / CHARS_PER_TOKEN_ESTIMATE);
    } else {
      sink.push(seg.ids, seg.ids.length);
      total += seg.ids.length + (seg.kind === "mark" ? (seg.extraTokens ?? 0) : 0);
    }
  }
  return total;
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
  let segments: Segment[];
  if (kind === "chat") {
    if (!("messages" in body)) throw new TypeError("chat request without messages");
    segments = chatSegments(body);
  } else {
    if (!("prompt" in body)) throw new TypeError("completions request without prompt");
    segments = completionsSegments(body);
  }
  const sink = new TokenSink(opts.prefixTokens);
  const promptTokens = collect(segments, sink, isolateMemo());
  const blocks = blockKeysFromTokens(
    sink.buf.subarray(0, sink.n),
    chainSeed(opts.model, opts.tenant),
    opts.blockTokens,
    opts.prefixTokens,
  );
  return { blocks, promptTokens };
}
