/**
 * 32-bit mixing for ring placement and hash tables. Block keys are already
 * well mixed, but tests, trace ids and `promptTokens` fallbacks are not, so
 * everything placed on the ring goes through MurmurHash3's finaliser (fmix32,
 * Appleby, public domain) first.
 */
import type { BlockKey } from "./types";

const TWO_POW_32 = 4294967296;

/** MurmurHash3's 32-bit finaliser: full avalanche of a 32-bit word. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A uint32 that depends on all 53 bits of a key (and on a salt, for probe sequences). */
export function hashKey(key: BlockKey, salt = 0): number {
  const lo = key >>> 0;
  const hi = Math.floor(key / TWO_POW_32) >>> 0;
  return fmix32(lo ^ fmix32(hi + Math.imul(salt, 0x9e3779b9) + 0x632be5ab));
}

/** A uint32 hash of a string (backend ids on the ring) with a numeric salt (the virtual node number). */
export function hashString(s: string, salt: number): number {
  let h = fmix32(salt + 0x5bd1e995);
  for (let i = 0; i < s.length; i++) {
    h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    h = (h << 13) | (h >>> 19);
  }
  return fmix32(h ^ s.length);
}
