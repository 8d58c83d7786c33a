/**
 * o200k_base tokenization at the edge, token-for-token identical to
 * js-tiktoken's `new Tiktoken(o200k_base).encode(text, [], [])` (asserted on
 * a corpus in test/node/tokenizer.test.ts and in workerd), but cheap to start
 * and fast per request:
 *
 * - the rank data is js-tiktoken's own `js-tiktoken/ranks/o200k_base` (one
 *   source of truth for the vocabulary), decoded into typed arrays on FIRST
 *   USE — never at import or in global scope, so an isolate that only serves
 *   /healthz or admin routes never pays for it;
 * - pre-tokenization is the same regex (`pat_str`, flags "gu") and merging
 *   follows the same rule (tokenizer-bpe.ts), so ids match exactly;
 * - encoding can stop after `maxTokens`: tiktoken pieces are matched left to
 *   right and merged independently, so the first N tokens of a text do not
 *   depend on anything after the piece that reaches N.
 *
 * Special tokens ("<|endoftext|>") in user text are encoded as ordinary text,
 * like js-tiktoken with allowedSpecial = disallowedSpecial = []: a prompt
 * must never be able to throw or forge a control token.
 */
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { bytePairEncode } from "./tokenizer-bpe";
import { type BpeRanks, BpeVocab } from "./tokenizer-vocab";

/** The leading tokens of a text, and how much of the text they cover. */
export interface EncodedText {
  /** Token ids; at least min(maxTokens, all) of them (the last piece may overshoot the cap). */
  readonly tokens: number[];
  /** UTF-16 code units of the text that `tokens` cover. */
  readonly charsConsumed: number;
  /** True when the whole text was tokenized. */
  readonly complete: boolean;
}

export class BpeTokenizer {
  private readonly vocab: BpeVocab;
  private readonly pattern: RegExp;
  private bytes = new Uint8Array(1024);
  private readonly utf8 = new TextEncoder();

  constructor(ranks: BpeRanks) {
    this.vocab = new BpeVocab(ranks.bpe_ranks);
    this.pattern = new RegExp(ranks.pat_str, "gu");
  }

  /** Number of ordinary tokens in the vocabulary. */
  get vocabSize(): number {
    return this.vocab.size;
  }

  /** Tokenizes `text`, stopping at the first piece boundary at or after `maxTokens` tokens. */
  encode(text: string, maxTokens: number = Number.POSITIVE_INFINITY): EncodedText {
    const out: number[] = [];
    const re = this.pattern;
    const vocab = this.vocab;
    re.lastIndex = 0;
    let consumed = 0;
    while (out.length < maxTokens) {
      const m = re.exec(text);
      if (m === null) {
        consumed = text.length;
        break;
      }
      const piece = m[0];
      consumed = re.lastIndex;
      if (piece.length === 0) {
        // The o200k pattern cannot match empty, but never spin if a future one can.
        re.lastIndex++;
        continue;
      }
      const len = this.toUtf8(piece);
      const whole = vocab.rankOf(this.bytes, 0, len);
      if (whole >= 0) out.push(whole);
      else bytePairEncode(vocab, this.bytes, len, out);
    }
    return { tokens: out, charsConsumed: consumed, complete: consumed >= text.length };
  }

  /** UTF-8 of `piece` into this.bytes; returns its length. ASCII (most pieces) skips TextEncoder. */
  private toUtf8(piece: string): number {
    const n = piece.length;
    if (this.bytes.length < n * 3) this.bytes = new Uint8Array(n * 3 + 64);
    const bytes = this.bytes;
    for (let i = 0; i < n; i++) {
      const c = piece.charCodeAt(i);
      if (c >= 0x80) {
        // Lone surrogates become U+FFFD here exactly as in TextEncoder.encode (js-tiktoken's path).
        return this.utf8.encodeInto(piece, bytes).written;
      }
      bytes[i] = c;
    }
    return n;
  }
}

let o200k: BpeTokenizer | undefined;

/** The isolate's o200k_base tokenizer, built on the first call (~tens of ms; see bench/results/cold-start.md). */
export function o200kTokenizer(): BpeTokenizer {
  if (o200k === undefined) o200k = new BpeTokenizer(o200kBase);
  return o200k;
}

/** Whether the o200k tables have been built in this isolate (for tests and cold-start accounting). */
export function o200kLoaded(): boolean {
  return o200k !== undefined;
}

/** Shorthand: the leading tokens of `text` under o200k_base. */
export function encodeO200k(text: string, maxTokens?: number): EncodedText {
  return o200kTokenizer().encode(text, maxTokens);
}
