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
 * - encoding can stop after `maxTokens` tokens or `maxChars` characters:
 *   tiktoken pieces are matched left to right and merged independently, so
 *   the first N tokens of a text do not depend on anything after the piece
 *   that reaches N;
 * - no piece is longer than MAX_PIECE_RUN code points per repeated class
 *   (tokenizer-pattern.ts), so one regex match and one merge cost a bounded
 *   amount whatever the text: encoding K characters costs O(K), never the
 *   length of a run that happens to start there. Text whose runs are all
 *   shorter (every ordinary text; the corpus tests hold it) tokenizes
 *   exactly as js-tiktoken does; a longer run is cut into pieces of
 *   MAX_PIECE_RUN, which js-tiktoken would merge as one.
 *
 * Special tokens ("<|endoftext|>") in user text are encoded as ordinary text,
 * like js-tiktoken with allowedSpecial = disallowedSpecial = []: a prompt
 * must never be able to throw or forge a control token.
 */
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { bytePairEncode, SMALL_PIECE_BYTES } from "./tokenizer-bpe";
import { boundPattern } from "./tokenizer-pattern";
import { type BpeRanks, BpeVocab } from "./tokenizer-vocab";

/**
 * Longest run of one repeated character class inside a piece, in code
 * points. Above the longest run in ordinary text (a CJK sentence without
 * punctuation, a ruler of "=" — the corpus has 700-byte pieces), small
 * enough that one piece's merge stays well under a millisecond.
 */
export const MAX_PIECE_RUN = 1024;

/** The leading tokens of a text, and how much of the text they cover. */
export interface EncodedText {
  /** Token ids; at least min(maxTokens, all) of them (the last piece may overshoot the cap). */
  readonly tokens: number[];
  /** UTF-16 code units of the text that `tokens` cover. */
  readonly charsConsumed: number;
  /** True when the whole text was tokenized. */
  readonly complete: boolean;
}

/** Work done by one tokenizer since it was built: what the keying bounds are tested against. */
export interface TokenizerWork {
  /** UTF-16 code units matched by the pre-tokenization regex (consumed text). */
  chars: number;
  /** Pieces matched. */
  pieces: number;
  /** UTF-8 bytes of pieces that went through byte-pair merging (not single tokens). */
  mergedBytes: number;
  /** Longest piece merged, in bytes. */
  longestMergeBytes: number;
  /** Long pieces whose tokens came from the piece memo instead of a merge (only with `memoPieces`). */
  memoHits: number;
}

export interface BpeTokenizerOptions {
  /**
   * Remember the tokens of up to this many long pieces (above SMALL_PIECE_BYTES, the heap path) and reuse
   * them when the same piece comes again. Off (0) by default: the Worker's keying bounds its text per
   * request instead. A server that tokenizes whole prompts turns on it, because a long run of one character
   * is cut into identical MAX_PIECE_RUN pieces: 3.5 M spaces are ~3,400 copies of one 1,024-space piece,
   * which cost 1.7–16 s to merge one by one and one merge plus lookups with the memo. Identical pieces
   * merge to identical tokens, so the output does not change. Cleared wholesale when full.
   */
  readonly memoPieces?: number;
}

export class BpeTokenizer {
  private readonly vocab: BpeVocab;
  private readonly pattern: RegExp;
  private bytes = new Uint8Array(1024);
  private readonly utf8 = new TextEncoder();
  /**
   * UTF-16 code units one match attempt can examine past its start: a text
   * cut `lookahead` units past where encoding stops yields the same tokens.
   */
  readonly lookahead: number;
  readonly work: TokenizerWork = { chars: 0, pieces: 0, mergedBytes: 0, longestMergeBytes: 0, memoHits: 0 };
  private readonly memoPieces: number;
  private readonly pieceMemo = new Map<string, readonly number[]>();

  constructor(ranks: BpeRanks, maxPieceRun = MAX_PIECE_RUN, options: BpeTokenizerOptions = {}) {
    const memoPieces = options.memoPieces ?? 0;
    if (!Number.isInteger(memoPieces) || memoPieces < 0)
      throw new RangeError(`memoPieces must be a non-negative integer, got ${memoPieces}`);
    this.memoPieces = memoPieces;
    this.vocab = new BpeVocab(ranks.bpe_ranks);
    const bounded = boundPattern(ranks.pat_str, maxPieceRun);
    // Sticky: each match starts where the previous one ended, so no call scans ahead for a match.
    this.pattern = new RegExp(bounded.source, "yu");
    this.lookahead = 2 * bounded.maxWidth + 2;
  }

  /** Number of ordinary tokens in the vocabulary. */
  get vocabSize(): number {
    return this.vocab.size;
  }

  /**
   * Tokenizes `text`, stopping at the first piece boundary where at least
   * `maxTokens` tokens exist or at least `maxChars` UTF-16 units are consumed.
   */
  encode(
    text: string,
    maxTokens: number = Number.POSITIVE_INFINITY,
    maxChars: number = Number.POSITIVE_INFINITY,
  ): EncodedText {
    const out: number[] = [];
    const re = this.pattern;
    const vocab = this.vocab;
    const work = this.work;
    let consumed = 0;
    while (out.length < maxTokens && consumed < maxChars && consumed < text.length) {
      re.lastIndex = consumed;
      const m = re.exec(text);
      if (m === null || m[0].length === 0) {
        // Text the pattern does not match is skipped (tiktoken's find_iter does the same); one code point at a time.
        // tiktoken's patterns match at every position, so this never runs for them.
        const c = text.charCodeAt(consumed);
        consumed += c >= 0xd800 && c < 0xdc00 && consumed + 1 < text.length ? 2 : 1;
        continue;
      }
      const piece = m[0];
      consumed = re.lastIndex;
      work.chars += piece.length;
      work.pieces++;
      const len = this.toUtf8(piece);
      const whole = vocab.rankOf(this.bytes, 0, len);
      if (whole >= 0) out.push(whole);
      else if (this.memoPieces > 0 && len > SMALL_PIECE_BYTES) this.mergeRemembered(piece, len, out);
      else this.merge(len, out);
    }
    return { tokens: out, charsConsumed: consumed, complete: consumed >= text.length };
  }

  /** Byte-pair merges this.bytes[0, len) onto `out`. */
  private merge(len: number, out: number[]): void {
    this.work.mergedBytes += len;
    if (len > this.work.longestMergeBytes) this.work.longestMergeBytes = len;
    bytePairEncode(this.vocab, this.bytes, len, out);
  }

  /** merge(), or the tokens `piece` merged to before. */
  private mergeRemembered(piece: string, len: number, out: number[]): void {
    const hit = this.pieceMemo.get(piece);
    if (hit !== undefined) {
      this.work.memoHits++;
      for (let i = 0; i < hit.length; i++) out.push(hit[i]!);
      return;
    }
    const from = out.length;
    this.merge(len, out);
    if (this.pieceMemo.size >= this.memoPieces) this.pieceMemo.clear();
    this.pieceMemo.set(piece, out.slice(from));
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

/** Shorthand: the leading tokens of `text` under o200k_base (see BpeTokenizer.encode). */
export function encodeO200k(text: string, maxTokens?: number, maxChars?: number): EncodedText {
  return o200kTokenizer().encode(text, maxTokens, maxChars);
}
