/**
 * An invalid config in the operator's log (config.ts configErrorLine, loadConfig): the errors as the public
 * 503 and /healthz give them, plus the values of the vars they name, never a secret's; once per config.
 */
import { describe, expect, it } from "vitest";
import { configErrorLine, loadConfig, type RawConfigEnv } from "./config";

const BACKENDS = JSON.stringify([
  { id: "a", url: "http://10.0.0.1:8000", models: ["m"], apiKey: "sk-backend-secret", kvCacheTokens: 1000 },
]);
const good: RawConfigEnv = {
  BACKENDS,
  GATEWAY_API_KEYS: "client-key-secret-1",
  ADMIN_TOKEN: "admin-token-secret-0123456789",
};

describe("config errors in the log", () => {
  it("echoes a bad var's value beside its error", () => {
    const line = JSON.parse(
      configErrorLine({ ...good, SHADOW: "true", BACKEND_CHECK_SECONDS: "5m" }, [
        "SHADOW: must be on or off",
        "BACKEND_CHECK_SECONDS: must be an integer (seconds, 0 = off) in decimal digits, no sign, hex or exponent",
      ]),
    );
    expect(line).toMatchObject({
      msg: "config_invalid",
      level: "error",
      got: { SHADOW: "true", BACKEND_CHECK_SECONDS: "5m" },
    });
    expect(line.errors).toHaveLength(2);
  });

  it("never echoes a secret, whatever its error", () => {
    const env = { ...good, ADMIN_TOKEN: "short-secret", GATEWAY_API_KEYS: "k1,,k2-secret" };
    const text = configErrorLine(env, [
      "ADMIN_TOKEN: must be at least 16 characters",
      "GATEWAY_API_KEYS[1]: is empty",
      "BACKENDS[0].url: must be http(s) without credentials",
    ]);
    expect(text).not.toContain("short-secret");
    expect(text).not.toContain("k2-secret");
    expect(text).not.toContain("sk-backend-secret");
    expect(JSON.parse(text).got).toEqual({});
  });

  it("loadConfig logs an invalid config once, as it is parsed, and a valid one never", async () => {
    const lines: string[] = [];
    const bad = { ...good, ROUTING_POLICY: "prefix-aware" };
    for (let i = 0; i < 3; i++) expect((await loadConfig(bad, (l) => lines.push(l))).ok).toBe(false);
    await Promise.resolve();
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ got: { ROUTING_POLICY: "prefix-aware" } });
    expect(lines[0]).not.toContain("secret");
    expect((await loadConfig(good, (l) => lines.push(l))).ok).toBe(true);
    await Promise.resolve();
    expect(lines).toHaveLength(1);
  });
});

describe("a secret's value in a plain var", () => {
  it("is not echoed: the admin token, a gateway key, a backend's apiKey or url password, or a piece of one", () => {
    const env: RawConfigEnv = {
      ...good,
      BACKENDS: JSON.stringify([
        {
          id: "a",
          url: "http://ops:url-pass-secret@10.0.0.1:8000",
          models: ["m"],
          apiKey: "sk-backend-secret",
        },
      ]),
      GATEWAY_API_KEYS: "client-key-secret-1 max_concurrent=2, other-client-key",
      SHADOW: "admin-token-secret-0123456789",
      AB_STICKY: "client-key-secret-1",
      ROUTING_POLICY: "Bearer sk-backend-secret",
      AB_POLICY: "url-pass-secret",
      CORS_ALLOW_ORIGINS: "admin-token-secret",
      ROUTER_CELLS: "seven",
    };
    const text = configErrorLine(env, [
      "SHADOW: must be on or off",
      "AB_STICKY: must be one of …",
      "ROUTING_POLICY: unknown policy",
      "AB_POLICY: unknown policy",
      "CORS_ALLOW_ORIGINS: must be origins",
      "ROUTER_CELLS: must be auto or an integer",
    ]);
    for (const secret of ["admin-token", "client-key", "sk-backend", "url-pass"])
      expect(text).not.toContain(secret);
    const got = JSON.parse(text).got;
    expect(Object.keys(got).sort()).toEqual(
      ["AB_POLICY", "AB_STICKY", "CORS_ALLOW_ORIGINS", "ROUTER_CELLS", "ROUTING_POLICY", "SHADOW"].sort(),
    );
    // A value that holds no secret is still shown: what the line is for.
    expect(got.ROUTER_CELLS).toBe("seven");
  });
});
