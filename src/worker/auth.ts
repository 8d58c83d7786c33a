/**
 * Client authentication: `Authorization: Bearer <key>` against the gateway
 * keys. Both sides are SHA-256 digests (fixed length, so length leaks
 * nothing) compared without an early exit, and every configured key is
 * compared, so timing says neither which key nor how much of it matched.
 * A key that already matched once skips the hash (it can only tell a caller
 * that their key is valid, which the response says anyway).
 */
import { sha256 } from "./sha256";

/** Constant-time equality of two equal-length digests (workerd's timingSafeEqual when present). */
export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  const subtle = crypto.subtle as SubtleCrypto & {
    timingSafeEqual?: (x: ArrayBufferView, y: ArrayBufferView) => boolean;
  };
  if (typeof subtle.timingSafeEqual === "function") return subtle.timingSafeEqual(a, b);
  let diff = 0;
  for (let i = 0; i < a.byteLength; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** The token of a `Bearer` Authorization header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/**
 * Tokens that matched, per digest list (i.e. per config version), with the
 * index of the digest they matched: a known-good token skips the SHA-256 (a
 * crypto call and a promise per request). Only valid keys enter, so the map is
 * as small as GATEWAY_API_KEYS, and a wrong token always takes the full
 * hash-and-compare path. The raw keys are in the isolate's env anyway; this
 * keeps no secret that was not already there.
 */
const accepted = new WeakMap<readonly Uint8Array[], Map<string, number>>();

/**
 * Index of the digest `token` matches in `digests`, or -1. Always compares
 * against all of them; with duplicate digests the last match wins (config
 * de-duplicates keys, so it never has any).
 */
export async function matchToken(token: string | undefined, digests: readonly Uint8Array[]): Promise<number> {
  if (token !== undefined) {
    const known = accepted.get(digests)?.get(token);
    if (known !== undefined) return known;
  }
  // Hash even a missing token so the two paths cost the same.
  const d = await sha256(token ?? "");
  let found = -1;
  for (let i = 0; i < digests.length; i++) if (digestsEqual(d, digests[i]!)) found = i;
  if (found < 0 || token === undefined) return -1;
  let map = accepted.get(digests);
  if (map === undefined) {
    map = new Map();
    accepted.set(digests, map);
  }
  map.set(token, found);
  return found;
}

/** True when `token` matches one of `digests`; always compares against all of them. */
export async function tokenMatches(
  token: string | undefined,
  digests: readonly Uint8Array[],
): Promise<boolean> {
  return (await matchToken(token, digests)) >= 0;
}
