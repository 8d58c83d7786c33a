/**
 * GATEWAY_API_KEYS with per-key options (`<key> max_concurrent=N`), and the
 * per-key limit vars: what each entry means, every mistake named by position
 * and never by its text.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/worker/config";
import { keyIdOf, parseKeyEntries } from "../../src/worker/gateway-keys";
import { sha256 } from "../../src/worker/sha256";

const BASE = {
  BACKENDS: JSON.stringify([{ id: "a", url: "http://10.0.0.1:8000", models: ["m"], kvCacheTokens: 1000 }]),
  ADMIN_TOKEN: "0123456789abcdef",
};

describe("parseKeyEntries", () => {
  it.each([
    ["sk-a-0123456789abcdef", [{ key: "sk-a-0123456789abcdef", options: {} }]],
    [
      " sk-a-0123456789abcdef ,sk-b-0123456789abcdef ,, ",
      [
        { key: "sk-a-0123456789abcdef", options: {} },
        { key: "sk-b-0123456789abcdef", options: {} },
      ],
    ],
    [
      "sk-a-0123456789abcdef max_concurrent=8",
      [{ key: "sk-a-0123456789abcdef", options: { maxConcurrent: 8 } }],
    ],
    [
      "sk-a-0123456789abcdef \t max_concurrent=0 , sk-b-0123456789abcdef",
      [
        { key: "sk-a-0123456789abcdef", options: { maxConcurrent: 0 } },
        { key: "sk-b-0123456789abcdef", options: {} },
      ],
    ],
    // A key may hold '=' (base64) or ':' : only whitespace ends it.
    ["YWJjZGVmZ2hpamts== max_concurrent=3", [{ key: "YWJjZGVmZ2hpamts==", options: { maxConcurrent: 3 } }]],
    ["org:team:key-0123456", [{ key: "org:team:key-0123456", options: {} }]],
    // The same key twice with the same options is one key.
    [
      "sk-a-0123456789abcdef max_concurrent=2, sk-a-0123456789abcdef max_concurrent=2",
      [{ key: "sk-a-0123456789abcdef", options: { maxConcurrent: 2 } }],
    ],
  ])("%j", (raw, entries) => {
    expect(parseKeyEntries(raw)).toEqual({ ok: true, entries });
  });

  it.each([
    [
      "sk-a-0123456789abcdef max_concurrent=",
      "GATEWAY_API_KEYS[0].max_concurrent",
      "must be an integer in 0..10000",
    ],
    ["sk-a-0123456789abcdef max_concurrent=-1", "GATEWAY_API_KEYS[0].max_concurrent", "must be an integer"],
    ["sk-a-0123456789abcdef max_concurrent=2.5", "GATEWAY_API_KEYS[0].max_concurrent", "must be an integer"],
    [
      "x-0123456789abcdef, sk-a-0123456789abcdef max_concurrent=10001",
      "GATEWAY_API_KEYS[1].max_concurrent",
      "0..10000",
    ],
    [
      "sk-a-0123456789abcdef max_concurrent=1 max_concurrent=2",
      "GATEWAY_API_KEYS[0].max_concurrent",
      "given twice",
    ],
    ["sk-a-0123456789abcdef maxConcurrent=4", "GATEWAY_API_KEYS[0]", "unknown option"],
    // Spaces around '=' split the option into tokens that mean nothing.
    ["sk-a-0123456789abcdef max_concurrent = 4", "GATEWAY_API_KEYS[0]", "unknown option"],
    // Two keys with the comma forgotten: the second is not taken for an option value, and not echoed.
    ["sk-first-0123456789ab sk-second-secret", "GATEWAY_API_KEYS[0]", "separate keys with commas"],
    [
      "sk-a-0123456789abcdef max_concurrent=1, sk-b-0123456789abcdef, sk-a-0123456789abcdef max_concurrent=2",
      "GATEWAY_API_KEYS[2]",
      "entry [0]",
    ],
    // A key as short as a word is a guess away (ADMIN_TOKEN's least length, 16).
    ["sk-0123456789abcdef, sk-short-secret", "GATEWAY_API_KEYS[1]", "must be at least 16 characters"],
  ])("%j → names the entry, never its text", async (raw, path, message) => {
    const r = await parseConfig({ ...BASE, GATEWAY_API_KEYS: raw });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const line = r.errors.find((e) => e.startsWith(`${path}:`));
    expect(line, r.errors.join("; ")).toBeDefined();
    expect(line).toContain(message);
    const all = r.errors.join(" ");
    for (const secret of [
      "sk-a-0123456789abcdef",
      "sk-b-0123456789abcdef",
      "sk-first-0123456789ab",
      "sk-second-secret",
      "sk-short-secret",
    ])
      expect(all).not.toContain(secret);
  });
});

describe("per-key limits in the config", () => {
  it("defaults: rate limit on, no in-flight limit", async () => {
    const r = await parseConfig({ ...BASE, GATEWAY_API_KEYS: "sk-a-0123456789abcdef" });
    if (!r.ok) throw new Error(r.errors.join("; "));
    expect(r.config.keyLimits).toEqual({ rateLimit: true, maxConcurrent: 0 });
    expect(r.config.gatewayKeys).toEqual([
      {
        id: keyIdOf(await sha256("sk-a-0123456789abcdef")),
        maxConcurrent: 0,
        saltSecret: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    ]);
    // The cache_salt's seed (PREFIX_SCOPE=key) is neither the id nor the key's plain digest: nothing the
    // operator's objects or logs show lets anyone compute a key's salt.
    expect(r.config.gatewayKeys[0]!.saltSecret).not.toContain(keyIdOf(await sha256("sk-a-0123456789abcdef")));
  });

  it("gives each key its override, else KEY_MAX_CONCURRENT, in the order of the digests", async () => {
    const r = await parseConfig({
      ...BASE,
      GATEWAY_API_KEYS:
        "sk-a-0123456789abcdef max_concurrent=8, sk-b-0123456789abcdef, sk-c-0123456789abcdef max_concurrent=0",
      KEY_MAX_CONCURRENT: "3",
      KEY_RATE_LIMIT: "off",
    });
    if (!r.ok) throw new Error(r.errors.join("; "));
    expect(r.config.keyLimits).toEqual({ rateLimit: false, maxConcurrent: 3 });
    expect(r.config.gatewayKeys.map((k) => k.maxConcurrent)).toEqual([8, 3, 0]);
    expect(r.config.gatewayKeyDigests).toEqual([
      await sha256("sk-a-0123456789abcdef"),
      await sha256("sk-b-0123456789abcdef"),
      await sha256("sk-c-0123456789abcdef"),
    ]);
    // The id is 16 hex of the key's SHA-256: distinct per key, and not the key.
    const ids = r.config.gatewayKeys.map((k) => k.id);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{16}$/);
  });

  it.each([
    [{ KEY_MAX_CONCURRENT: "-1" }, "KEY_MAX_CONCURRENT: must be an integer"],
    [{ KEY_MAX_CONCURRENT: "10001" }, "KEY_MAX_CONCURRENT: must be <= 10000"],
    [{ KEY_MAX_CONCURRENT: "lots" }, "KEY_MAX_CONCURRENT: must be an integer"],
    [{ KEY_RATE_LIMIT: "yes" }, "KEY_RATE_LIMIT: must be on or off"],
    [{ KEY_RATE_LIMIT: "" }, "KEY_RATE_LIMIT: must be on or off"],
  ])("names the bad var: %j", async (patch, expected) => {
    const r = await parseConfig({ ...BASE, GATEWAY_API_KEYS: "sk-a-0123456789abcdef", ...patch });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.join("; ")).toContain(expected);
  });
});
