/**
 * SHA-256 in the Worker (Web Crypto), for what must be named or compared
 * without being kept: gateway keys and tokens (compared as digests), key
 * ids, log fingerprints, fleet versions, poison-prompt memory.
 */

export async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

/** The first `bytes` bytes of a digest (or any bytes) as lowercase hex (2 digits a byte). */
export function hexPrefix(digest: Uint8Array, bytes: number): string {
  let hex = "";
  for (let i = 0; i < bytes; i++) hex += digest[i]!.toString(16).padStart(2, "0");
  return hex;
}

/** The first `bytes` bytes of the text's SHA-256, as hex. */
export async function sha256Hex(text: string, bytes: number): Promise<string> {
  return hexPrefix(await sha256(text), bytes);
}
