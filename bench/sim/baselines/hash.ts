/**
 * Small deterministic 32-bit hashes for the baselines that place keys by
 * hashing (SageMaker's prefix → instance mapping). Pure arithmetic: no
 * crypto, no randomness, identical on every run and platform.
 */

import type { BlockKey } from "../../../src/routing/types";

const TWO_POW_32 = 4294967296;

/** FNV-1a over the UTF-16 code units of `s` (backend ids are short ASCII). */
export function hashString32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** MurmurHash3's fmix32 finaliser: full avalanche of one 32-bit word. */
function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Hash of a (block key, salt) pair. A BlockKey is an exact integer of up to
 * 53 bits, so it is split into its high and low 32-bit words first.
 */
export function hashKeyWithSalt(key: BlockKey, salt: number): number {
  const lo = key >>> 0;
  const hi = Math.floor(key / TWO_POW_32) >>> 0;
  return fmix32(fmix32(lo ^ salt) ^ Math.imul(hi, 0x9e3779b1) ^ 0x27d4eb2f);
}

/** Maps a 32-bit hash to the open interval (0, 1). */
export function unitInterval(h: number): number {
  return (h + 0.5) / TWO_POW_32;
}
