/**
 * Client authentication: `Authorization: Bearer <key>` against the gateway
 * keys. Both sides are SHA-256 digests (fixed length, so length leaks
 * nothing) compared without an early exit, and every configured key is
 * compared, so timing says neither which key nor how much of it matched.
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

/** True when `token` matches one of `digests`; always compares against all of them. */
export async function tokenMatches(
  token: string | undefined,
  digests: readonly Uint8Array[],
): Promise<boolean> {
  // Hash even a missing token so the two paths cost the same.
  const d = await sha256(token ?? "");
  let ok = false;
  for (const k of digests) ok = digestsEqual(d, k) || ok;
  return ok && token !== undefined;
}
