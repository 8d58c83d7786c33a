import { describe, expect, it } from "vitest";
import { blockKeysFromTokens, chainSeed } from "./block-keys";
import { chainDigest, DIGEST_MAX_KEYS, digestStrideBlocks, readChainDigest } from "./chain-digest";

/** n pseudo token ids below o200k's vocabulary size. */
const tokens = (n: number): Uint32Array =>
  Uint32Array.from({ length: n }, (_, i) => (i * 2654435761) % 200_000);

describe("chain digest", () => {
  const seed = chainSeed("llama-3.1-8b");

  it("keeps one key per 64 tokens with the defaults, 128 keys (1 KiB) for an 8k-token prompt", () => {
    expect(digestStrideBlocks(16, 8192)).toBe(4);
    const d = chainDigest(blockKeysFromTokens(tokens(8192), seed, 16, 8192), 16, 8192);
    expect(d.prefixEvery).toBe(64);
    expect(d.prefixKeys).toHaveLength(128 * 8);
    expect(d.prefixKeys).toMatch(/^[0-9a-f]+$/);
  });

  it("spaces keys by the settings alone and stays bounded for any PREFIX_TOKENS", () => {
    expect(digestStrideBlocks(16, 100)).toBe(4);
    expect(digestStrideBlocks(128, 8192)).toBe(1);
    expect(digestStrideBlocks(16, 1 << 20)).toBe(512);
    const d = chainDigest(blockKeysFromTokens(tokens(1 << 17), seed, 16, 1 << 20), 16, 1 << 20);
    expect(d.prefixEvery).toBe(8192);
    expect(d.prefixKeys.length / 8).toBeLessThanOrEqual(DIGEST_MAX_KEYS);
    // A prompt shorter than one spacing logs no key at all.
    expect(chainDigest(blockKeysFromTokens(tokens(63), seed, 16), 16, 8192).prefixKeys).toBe("");
  });

  it("two prompts share digest keys exactly as far as they share whole 64-token steps", () => {
    const a = tokens(1000);
    const b = tokens(1000);
    b[200] = 7; // the 4th step (tokens 192..255) differs
    const da = readChainDigest(chainDigest(blockKeysFromTokens(a, seed, 16), 16, 8192));
    const db = readChainDigest(chainDigest(blockKeysFromTokens(b, seed, 16), 16, 8192));
    if (typeof da === "string" || typeof db === "string") throw new Error("unreadable digest");
    expect(da.keys).toHaveLength(15);
    expect(db.keys.slice(0, 3)).toEqual(da.keys.slice(0, 3));
    for (let j = 3; j < 15; j++) expect(db.keys[j]).not.toBe(da.keys[j]);
    // Another tenant's chain shares nothing.
    const dt = readChainDigest(
      chainDigest(blockKeysFromTokens(a, chainSeed("llama-3.1-8b", "t"), 16), 16, 8192),
    );
    if (typeof dt === "string") throw new Error(dt);
    expect(dt.keys.filter((k, j) => k === da.keys[j])).toEqual([]);
  });

  it("reads back what it wrote and refuses anything else", () => {
    expect(readChainDigest({ prefixKeys: "0000000aFFFFFFFF".toLowerCase(), prefixEvery: 64 })).toEqual({
      keys: [10, 0xffffffff],
      every: 64,
    });
    expect(readChainDigest({ prefixKeys: "", prefixEvery: 64 })).toEqual({ keys: [], every: 64 });
    expect(readChainDigest({})).toMatch(/no prefixKeys/);
    expect(readChainDigest({ prefixKeys: "abc", prefixEvery: 64 })).toMatch(/8 hex/);
    expect(readChainDigest({ prefixKeys: "0000000g", prefixEvery: 64 })).toMatch(/hex/);
    expect(readChainDigest({ prefixKeys: "00000000", prefixEvery: 0 })).toMatch(/prefixEvery/);
    expect(readChainDigest({ prefixKeys: "0".repeat(8 * 129), prefixEvery: 64 })).toMatch(/at most 128/);
  });
});
