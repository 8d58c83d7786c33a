/**
 * Segments → prompt text, for replaying synthetic and Mooncake workloads
 * against real HTTP servers (bench/e2e, the conformance tests).
 *
 * Each token of a segment becomes one word that is a single o200k_base token
 * with its leading space (" harbor", " tulip", ...), picked deterministically
 * from the segment key and the token's offset inside the segment. So:
 * - the text of a prompt has exactly promptTokens tokens under o200k_base
 *   (the tokenizer's pre-split puts every " word" in its own piece, and each
 *   piece is one vocabulary entry, so nothing merges across words);
 * - equal segments give equal text, so prompts that begin with the same
 *   segments begin with the same tokens: the prefix structure the simulator
 *   sees is the one the gateway and the emulators see.
 */
import { getEncoding, type Tiktoken } from "js-tiktoken";
import type { Segment } from "./types";

let encoding: Tiktoken | undefined;

/** The o200k_base encoder, built once (it is ~200k ranks: hundreds of ms). */
export function o200k(): Tiktoken {
  encoding ??= getEncoding("o200k_base");
  return encoding;
}

let vocabulary: readonly string[] | undefined;

/**
 * Words of 3–10 lowercase ASCII letters that o200k_base encodes, with their
 * leading space, as one token; in token-id order so the list is stable.
 */
export function singleTokenWords(): readonly string[] {
  if (vocabulary !== undefined) return vocabulary;
  const enc = o200k();
  const words: string[] = [];
  const shape = /^ [a-z]{3,10}$/;
  // o200k_base has 199,998 ranked tokens below the special ones.
  for (let id = 0; id < 199_998; id++) {
    let piece: string;
    try {
      piece = enc.decode([id]);
    } catch {
      continue;
    }
    if (shape.test(piece) && enc.encode(piece).length === 1) words.push(piece);
  }
  vocabulary = words;
  return words;
}

/** FNV-1a over the key's UTF-16 units: a stable 32-bit identity for the segment. */
function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Mixes (segment hash, offset) into an index (MurmurHash3's fmix32 finaliser). */
function wordIndex(h: number, offset: number, size: number): number {
  let x = (h ^ Math.imul(offset + 1, 0x9e3779b1)) >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return (x >>> 0) % size;
}

/** The text of one segment: `tokens` single-token words, each with its leading space. */
export function segmentText(segment: Segment): string {
  const words = singleTokenWords();
  const h = keyHash(segment.key);
  const parts = new Array<string>(segment.tokens);
  for (let i = 0; i < segment.tokens; i++) parts[i] = words[wordIndex(h, i, words.length)]!;
  return parts.join("");
}

/** The text of a whole prompt: its segments' texts, concatenated. */
export function segmentsText(segments: readonly Segment[]): string {
  let text = "";
  for (const s of segments) text += segmentText(s);
  return text;
}
