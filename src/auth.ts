/**
 * Client authentication: `Authorization: Bearer <key>` against the gateway
 * keys. Both sides are SHA-256 digests (fixed length, so length leaks
 * nothing) compared without an early exit, and every configured key is
 * compared, so timing says neither which key nor how much of it matched.
 * A key that already matched once skips the hash (it can only tell a caller
 * that their key is valid, which the response says anyway).
 */
import { sha256 } from "./config";

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
 * Tokens that matched, per digest list (i.e. per config version): a known-good
 * token skips the SHA-256 (a crypto call and a promise per request). Only
 * valid keys enter, so the set is as small as GATEWAY_API_KEYS, and a wrong
 * token always takes the full hash-and-compare path. The raw keys are in the
 * isolate's env anyway; this keeps no secret that was not already there.
 */
const accepted = new WeakMap<readonly Uint8Array[], Set<string>>();

/** True when `token` matches one of `digests`; always compares against all of them. */
export async function tokenMatches(
  token: string | undefined,
  digests: readonly Uint8Array[],
): Promise<boolean> {
  if (token !== undefined && accepted.get(digests)?.has(token) === true) return true;
  // Hash even a missing token so the two paths cost the same.
  const d = await sha256(token ?? "");
  let ok = false;
  for (const k of digests) ok = digestsEqual(d, k) || ok;
  if (!ok || token === undefined) return false;
  let set = accepted.get(digests);
  if (set === undefined) {
    set = new Set();
    accepted.set(digests, set);
  }
  set.add(token);
  return true;
}
