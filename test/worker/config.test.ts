/** Config validation: field-named errors at the edge, on every request and in /healthz. */
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { LOCATION_HINTS, type NumericSetting, SETTINGS, type SettingName } from "../../src/routing/defaults";
import { formatPath, loadConfig, parseConfig } from "../../src/worker/config";
import { EXAMPLE_ADMIN_TOKEN, EXAMPLE_GATEWAY_KEY } from "../../src/worker/example-secrets";
import { authHeaders, expectOpenAIError, gatewayWithEnv, MODEL } from "./helpers";

const base = {
  BACKENDS: JSON.stringify([
    { id: "a", url: "http://10.0.0.1:8000", models: ["m"], kvCacheTokens: 1000 },
    { id: "b", url: "https://gpu.example/", models: ["m", "n"], apiKey: "k", weight: 2, kvCacheTokens: 2000 },
  ]),
  GATEWAY_API_KEYS: "client-key-one-0001, client-key-two-0002 ,,",
  ADMIN_TOKEN: "0123456789abcdef",
};

describe("parseConfig", () => {
  it("applies documented defaults and normalizes urls", async () => {
    const r = await parseConfig(base);
    if (!r.ok) throw new Error(r.errors.join("; "));
    expect(r.config.router).toEqual({
      policy: "prefix_aware",
      blockTokens: 16,
      balanceFactor: 1.25,
      leaseTtlSeconds: 600,
      healthProbeSeconds: 10,
      ejectAfterFaults: 3,
      restoreAfterChecks: 2,
      maxEjectionPercent: 50,
      retryBudgetPercent: 20,
      abPolicy: null,
      abPercent: 50,
      shadow: false,
      engineScrapeMs: 0,
      maxInflightPerBackend: 0,
      keyShareHeadroomPercent: 10,
      backendCheckSeconds: 300,
    });
    expect(r.config.abSticky).toBe("conversation");
    expect(r.config.routerCells).toBe("auto");
    expect(r.config.deadlines).toEqual({
      connectMs: 10_000,
      firstByteMs: 60_000,
      idleMs: 20_000,
      clientStallMs: 60_000,
      responseMs: 600_000,
      bodyMs: 300_000,
      routerMs: 50,
      reportCarryMs: 20,
    });
    expect(r.config.prefixTokens).toBe(32_768);
    expect(r.config.prefixScope).toBe("shared");
    expect(r.config.backends[0]!.weight).toBe(1);
    expect(r.config.backends[0]!.cacheSalt).toBe(false);
    expect(r.config.backends[1]!.url).toBe("https://gpu.example");
    expect(r.config.models).toEqual(["m", "n"]);
    expect(r.config.gatewayKeyDigests).toHaveLength(2);
  });

  it.each([
    [
      { BACKENDS: JSON.stringify([{ id: "a", url: "ftp://x", models: ["m"], kvCacheTokens: 1 }]) },
      "BACKENDS[0].url: must be http(s)",
    ],
    // The OpenAI base_url habit: the gateway appends /v1/..., so every request would go to /v1/v1/... (a 404
    // relayed as the backend's own answer, never counted against it: a fleet that serves nothing, silently).
    ...["http://x:8000/v1", "http://x:8000/v1/", "https://x/proxy/V1"].map(
      (url): [{ BACKENDS: string }, string] => [
        { BACKENDS: JSON.stringify([{ id: "a", url, models: ["m"], kvCacheTokens: 1 }]) },
        "BACKENDS[0].url: must be the server's base URL without /v1 (the gateway appends /v1/...)",
      ],
    ),
    // An endpoint's url pasted whole: every request would go to .../v1/chat/completions/v1/chat/completions.
    ...[
      "http://x:8000/v1/chat/completions",
      "http://x:8000/v1/completions/",
      "https://x/proxy/V1/Models",
      "http://x/v1/responses",
    ].map((url): [{ BACKENDS: string }, string] => [
      { BACKENDS: JSON.stringify([{ id: "a", url, models: ["m"], kvCacheTokens: 1 }]) },
      "BACKENDS[0].url: must be the server's base URL, not an endpoint's (the gateway appends /v1/...)",
    ]),
    // A query or fragment would swallow the path the gateway appends (http://x?k=1/v1/chat/completions).
    ...["http://x:8000?token=1", "http://x:8000/#a", "http://x/?"].map(
      (url): [{ BACKENDS: string }, string] => [
        { BACKENDS: JSON.stringify([{ id: "a", url, models: ["m"], kvCacheTokens: 1 }]) },
        "BACKENDS[0].url: must have no query or fragment",
      ],
    ),
    [
      { BACKENDS: JSON.stringify([{ id: "a", url: "not a url", models: ["m"], kvCacheTokens: 1 }]) },
      "BACKENDS[0].url: must be http(s)",
    ],
    [{ BACKENDS: "[{" }, "BACKENDS: must be a JSON array of backends: not valid JSON at character 3"],
    // vLLM's start-up line, pasted as is ("GPU KV cache size: 442,368 tokens"): where, and why.
    [
      {
        BACKENDS:
          '[{"id":"a","url":"http://x","models":["m"],"apiKey":"sk-secret","kvCacheTokens": 442,368}]',
      },
      "BACKENDS: must be a JSON array of backends: not valid JSON at character 86 (write kvCacheTokens without thousands separators: 442368, not 442,368)",
    ],
    [{ BACKENDS: "[]" }, "BACKENDS: must list at least one backend"],
    [
      { BACKENDS: JSON.stringify([{ id: "a", url: "http://x", models: [], kvCacheTokens: 1 }]) },
      "BACKENDS[0].models: must list at least one model",
    ],
    [
      {
        BACKENDS: JSON.stringify([{ id: "a", url: "http://x", models: ["m"], kvCacheTokens: 1, weight: 0 }]),
      },
      "BACKENDS[0].weight: must be > 0",
    ],
    [
      {
        BACKENDS: JSON.stringify([
          { id: "a", url: "http://x", models: ["m"], kvCacheTokens: 1 },
          { id: "a", url: "http://y", models: ["m"], kvCacheTokens: 1 },
        ]),
      },
      'BACKENDS[1].id: duplicate id "a"',
    ],
    // A field left out or of the wrong JSON type says what belongs there, not zod's own "Invalid input:
    // expected number, received undefined" (what a new operator saw for a BACKENDS without kvCacheTokens).
    ...(
      [
        [
          { id: "a", url: "http://x", models: ["m"] },
          'BACKENDS[0].kvCacheTokens: is missing: the instance\'s KV-cache capacity in tokens (vLLM logs it at start-up: "GPU KV cache size: N tokens"; write N without its commas)',
        ],
        [
          { id: "a", url: "http://x", models: ["m"], kvCacheTokens: "442368" },
          "BACKENDS[0].kvCacheTokens: must be a number of tokens, e.g. 442368",
        ],
        [
          { id: "a", url: "http://x", model: "m", kvCacheTokens: 1 },
          'BACKENDS[0].models: is missing: the model names it serves, as clients send them, e.g. ["llama-3.1-8b-instruct"]',
        ],
        [
          { id: "a", url: "http://x", models: "m", kvCacheTokens: 1 },
          'BACKENDS[0].models: must be a JSON array of model names, e.g. ["llama-3.1-8b-instruct"]',
        ],
        [
          { id: "a", url: "http://x", models: [1], kvCacheTokens: 1 },
          "BACKENDS[0].models[0]: must be a model name (a string)",
        ],
        [
          { url: "http://x", models: ["m"], kvCacheTokens: 1 },
          'BACKENDS[0].id: is missing: a name for this backend, e.g. "gpu-1"',
        ],
        [
          { id: "a", models: ["m"], kvCacheTokens: 1 },
          'BACKENDS[0].url: is missing: the server\'s base URL, e.g. "http://10.0.0.1:8000"',
        ],
        [
          { id: "a", url: "http://x", models: ["m"], kvCacheTokens: 1, weight: "2" },
          "BACKENDS[0].weight: must be a number (relative capacity, default 1)",
        ],
        ["gpu-1", 'BACKENDS[0]: must be an object such as {"id", "url", "models", "kvCacheTokens"}'],
      ] as const
    ).map(([entry, message]): [{ BACKENDS: string }, string] => [
      { BACKENDS: JSON.stringify([entry]) },
      message,
    ]),
    [
      { BACKENDS: JSON.stringify({ id: "a", url: "http://x", models: ["m"], kvCacheTokens: 1 }) },
      "BACKENDS: must be a JSON array of backends ([{…}, …]), not a single object",
    ],
    // A misspelt field must not be dropped: an `apikey` or `api_key` left the backend with no key, so every
    // request sent there came back a 401 the client took for its own key's, and the backend was never blamed.
    ...(
      [
        ["apikey", 'unknown field "apikey" (did you mean "apiKey"?)'],
        ["api_key", 'unknown field "api_key" (did you mean "apiKey"?)'],
        ["kv_cache_tokens", 'unknown field "kv_cache_tokens" (did you mean "kvCacheTokens"?)'],
        [
          "wieght",
          'unknown field "wieght" (a backend has id, url, models, apiKey, weight, kvCacheTokens, maxInflight, cacheSalt)',
        ],
      ] as const
    ).map(([field, message]): [{ BACKENDS: string }, string] => [
      {
        BACKENDS: JSON.stringify([
          { id: "a", url: "http://x", models: ["m"], kvCacheTokens: 1 },
          { id: "b", url: "http://y", models: ["m"], kvCacheTokens: 1, [field]: "k" },
        ]),
      },
      `BACKENDS[1]: ${message}`,
    ]),
    [{ GATEWAY_API_KEYS: " , " }, "GATEWAY_API_KEYS: must hold at least one"],
    [{ GATEWAY_API_KEYS: undefined }, "GATEWAY_API_KEYS: is not set"],
    [{ ADMIN_TOKEN: "short" }, "ADMIN_TOKEN: must be at least 16 characters"],
    [{ ROUTING_POLICY: "fastest" }, "ROUTING_POLICY: must be one of prefix_aware"],
    [{ BLOCK_TOKENS: "sixteen" }, "BLOCK_TOKENS: must be an integer"],
    [{ BLOCK_TOKENS: "32", PREFIX_TOKENS: "16" }, "PREFIX_TOKENS: must be >= BLOCK_TOKENS"],
    [{ BALANCE_FACTOR: "0.5" }, "BALANCE_FACTOR: must be >= 1"],
    [{ BALANCE_FACTOR: "abc" }, "BALANCE_FACTOR: must be a number"],
    [{ LEASE_TTL_SECONDS: "0" }, "LEASE_TTL_SECONDS: must be >= 1"],
    [{ AB_POLICY: "fastest" }, "AB_POLICY: must be off or one of prefix_aware"],
    [{ AB_POLICY: "prefix_aware" }, "AB_POLICY: must differ from ROUTING_POLICY (or be off)"],
    [{ AB_PERCENT: "101" }, "AB_PERCENT: must be <= 100"],
    [{ AB_STICKY: "user" }, "AB_STICKY: must be one of conversation, tenant"],
    // A scope the operator misspells must not quietly fall back to sharing prompts across keys.
    [{ PREFIX_SCOPE: "tenant" }, "PREFIX_SCOPE: must be one of shared, key"],
    [{ PREFIX_SCOPE: "KEY" }, "PREFIX_SCOPE: must be one of shared, key"],
    [{ PREFIX_SCOPE: "" }, "PREFIX_SCOPE: must be one of shared, key"],
    [
      {
        BACKENDS: JSON.stringify([
          { id: "a", url: "http://x:8000", models: ["m"], kvCacheTokens: 1, cacheSalt: "yes" },
        ]),
      },
      "BACKENDS[0].cacheSalt: must be true or false: whether this backend's engine takes vLLM's cache_salt",
    ],
    [
      {
        BACKENDS: JSON.stringify([
          { id: "a", url: "http://x:8000", models: ["m"], kvCacheTokens: 1, cache_salt: true },
        ]),
      },
      'BACKENDS[0]: unknown field "cache_salt" (did you mean "cacheSalt"?)',
    ],
    [{ SHADOW: "yes" }, "SHADOW: must be on or off"],
    [{ ROUTER_CELLS: "0" }, "ROUTER_CELLS: must be auto or an integer within 1..256"],
    [{ ROUTER_CELLS: "257" }, "ROUTER_CELLS: must be auto or an integer within 1..256"],
    [{ ROUTER_CELLS: "2.5" }, "ROUTER_CELLS: must be auto or an integer within 1..256"],
    [{ ROUTER_CELLS: "many" }, "ROUTER_CELLS: must be auto or an integer within 1..256"],
    [{ ROUTER_LOCATION_HINT: "us-east-1" }, "ROUTER_LOCATION_HINT: must be empty (no hint) or one of wnam"],
    [{ ROUTER_LOCATION_HINT: "ENAM" }, "ROUTER_LOCATION_HINT: must be empty (no hint) or one of wnam"],
    // On, a scrape round every few ms would be an alarm and a subrequest per backend each time.
    [{ ENGINE_SCRAPE_MS: "50" }, "ENGINE_SCRAPE_MS: must be 0 (off) or >= 100"],
    // Likewise a backend check every few seconds: a subrequest per backend and an alarm each time.
    [{ BACKEND_CHECK_SECONDS: "5" }, "BACKEND_CHECK_SECONDS: must be 0 (off) or >= 10"],
    [{ BACKEND_CHECK_SECONDS: "5m" }, "BACKEND_CHECK_SECONDS: must be an integer (seconds, 0 = off)"],
    [{ BACKEND_CHECK_SECONDS: "86401" }, "BACKEND_CHECK_SECONDS: must be <= 86400"],
    [{ MAX_INFLIGHT_PER_BACKEND: "-1" }, "MAX_INFLIGHT_PER_BACKEND: must be an integer (requests in flight"],
    [{ MAX_INFLIGHT_PER_BACKEND: "8.5" }, "MAX_INFLIGHT_PER_BACKEND: must be an integer"],
    [{ MAX_INFLIGHT_PER_BACKEND: "100001" }, "MAX_INFLIGHT_PER_BACKEND: must be <= 100000"],
    // Past half the slots kept free, a flooding key would be held to less than the key it shares the pool with.
    [{ KEY_SHARE_HEADROOM_PERCENT: "51" }, "KEY_SHARE_HEADROOM_PERCENT: must be <= 50"],
    [
      { KEY_SHARE_HEADROOM_PERCENT: "-1" },
      "KEY_SHARE_HEADROOM_PERCENT: must be an integer (percent of a cell's slots",
    ],
    [{ KEY_SHARE_HEADROOM_PERCENT: "12.5" }, "KEY_SHARE_HEADROOM_PERCENT: must be an integer"],
    [
      {
        BACKENDS: JSON.stringify([
          { id: "a", url: "http://x:8000", models: ["m"], kvCacheTokens: 1, maxInflight: -2 },
        ]),
      },
      "BACKENDS[0].maxInflight: must be >= 0 (0 = no bound for this backend)",
    ],
    [
      {
        BACKENDS: JSON.stringify([
          { id: "a", url: "http://x:8000", models: ["m"], kvCacheTokens: 1, maxInflight: "8" },
        ]),
      },
      "BACKENDS[0].maxInflight: must be a number: this backend's bound on requests in flight",
    ],
    [
      {
        BACKENDS: JSON.stringify([
          { id: "a", url: "http://x:8000", models: ["m"], kvCacheTokens: 1, max_inflight: 8 },
        ]),
      },
      'BACKENDS[0]: unknown field "max_inflight" (did you mean "maxInflight"?)',
    ],
  ])("names the field: %j", async (patch, expected) => {
    const r = await parseConfig({ ...base, ...patch });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.join("; ")).toContain(expected);
    if (!r.ok) expect(r.errors.join("; ")).not.toContain("sk-secret");
  });

  it("keeps a path prefix in a backend url (a proxy mounting the server under /vllm)", async () => {
    const r = await parseConfig({
      ...base,
      BACKENDS: JSON.stringify([{ id: "a", url: "http://x:8000/vllm/", models: ["m"], kvCacheTokens: 1 }]),
    });
    expect(r.ok && r.config.backends[0]!.url).toBe("http://x:8000/vllm");
  });

  it("takes every Durable Object location hint, or none", async () => {
    for (const hint of LOCATION_HINTS) {
      const r = await parseConfig({ ...base, ROUTER_LOCATION_HINT: ` ${hint} ` });
      expect(r.ok && r.config.locationHint, hint).toBe(hint);
    }
    for (const none of [undefined, "", "  "]) {
      const r = await parseConfig({ ...base, ROUTER_LOCATION_HINT: none });
      expect(r.ok, String(none)).toBe(true);
      if (r.ok) expect(r.config.locationHint).toBeUndefined();
    }
  });

  it("refuses .dev.vars.example's public keys once BACKENDS leaves loopback, and keeps them for local runs", async () => {
    const example = {
      ADMIN_TOKEN: EXAMPLE_ADMIN_TOKEN,
      GATEWAY_API_KEYS: `${EXAMPLE_GATEWAY_KEY}, client-key-mine-0003`,
    };
    const remote = await parseConfig({ ...base, ...example });
    expect(remote.ok).toBe(false);
    if (!remote.ok) {
      expect(remote.errors).toContain(
        "ADMIN_TOKEN: is the public example from .dev.vars.example: set your own before BACKENDS leaves this machine",
      );
      expect(remote.errors.join("; ")).toContain("GATEWAY_API_KEYS: holds the public example key");
      expect(remote.errors.join("; ")).not.toContain(EXAMPLE_ADMIN_TOKEN);
    }
    // A stray space or newline around it (a pasted secret) is still the public example.
    for (const padded of [`${EXAMPLE_ADMIN_TOKEN} `, `\n${EXAMPLE_ADMIN_TOKEN}\n`]) {
      const r = await parseConfig({ ...base, ADMIN_TOKEN: padded });
      expect(r.ok ? [] : r.errors, JSON.stringify(padded)).toContain(
        "ADMIN_TOKEN: is the public example from .dev.vars.example: set your own before BACKENDS leaves this machine",
      );
    }
    const local = JSON.stringify([
      { id: "a", url: "http://127.0.0.1:8101", models: ["m"], kvCacheTokens: 1000 },
      { id: "b", url: "http://localhost:8102", models: ["m"], kvCacheTokens: 1000 },
    ]);
    expect((await parseConfig({ ...base, ...example, BACKENDS: local })).ok).toBe(true);
  });

  it("takes BACKEND_CHECK_SECONDS into the pool's settings (0: off)", async () => {
    const r = await parseConfig({ ...base, BACKEND_CHECK_SECONDS: "0" });
    expect(r.ok && r.config.router.backendCheckSeconds).toBe(0);
    const on = await parseConfig({ ...base, BACKEND_CHECK_SECONDS: "10" });
    expect(on.ok && on.config.router.backendCheckSeconds).toBe(10);
  });

  it("takes ENGINE_SCRAPE_MS into the pool's settings", async () => {
    const r = await parseConfig({ ...base, ENGINE_SCRAPE_MS: "1000" });
    expect(r.ok && r.config.router.engineScrapeMs).toBe(1000);
  });

  it("takes MAX_INFLIGHT_PER_BACKEND into the pool's settings, and a backend's maxInflight into its entry", async () => {
    const r = await parseConfig({
      ...base,
      MAX_INFLIGHT_PER_BACKEND: "32",
      BACKENDS: JSON.stringify([
        { id: "a", url: "http://x:8000", models: ["m"], kvCacheTokens: 1, maxInflight: 64 },
        { id: "b", url: "http://y:8000", models: ["m"], kvCacheTokens: 1 },
      ]),
    });
    expect(r.ok && r.config.router.maxInflightPerBackend).toBe(32);
    expect(r.ok && r.config.backends.map((b) => b.maxInflight)).toEqual([64, undefined]);
  });

  it("takes KEY_SHARE_HEADROOM_PERCENT into the pool's settings (0 turns fair shedding off)", async () => {
    const r = await parseConfig({ ...base, KEY_SHARE_HEADROOM_PERCENT: "0" });
    expect(r.ok && r.config.router.keyShareHeadroomPercent).toBe(0);
  });

  it("takes REQUEST_BODY_TIMEOUT_MS into the Worker's deadlines", async () => {
    const r = await parseConfig({ ...base, REQUEST_BODY_TIMEOUT_MS: "45000" });
    expect(r.ok && r.config.deadlines.bodyMs).toBe(45_000);
  });

  it("takes CLIENT_STALL_TIMEOUT_MS into the Worker's deadlines, 60 s when unset", async () => {
    const r = await parseConfig({ ...base, CLIENT_STALL_TIMEOUT_MS: "15000" });
    expect(r.ok && r.config.deadlines.clientStallMs).toBe(15_000);
    const unset = await parseConfig(base);
    expect(unset.ok && unset.config.deadlines.clientStallMs).toBe(60_000);
  });

  it("never echoes a secret value into an error", async () => {
    const r = await parseConfig({ ...base, ADMIN_TOKEN: "s3cr3t" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.join(" ")).not.toContain("s3cr3t");
  });

  describe.each(Object.entries(SETTINGS) as [SettingName, NumericSetting][])("var %s", (name, s) => {
    it("accepts its bounds and refuses one step past them, naming the var", async () => {
      const step = s.integer ? 1 : 0.01;
      for (const ok of [s.min, s.max, s.default]) {
        // PREFIX_TOKENS must be >= BLOCK_TOKENS: keep the other one out of the way.
        const other = name === "PREFIX_TOKENS" ? { BLOCK_TOKENS: "1" } : { PREFIX_TOKENS: "1024" };
        const r = await parseConfig({ ...base, ...other, [name]: String(ok) });
        expect(r.ok, `${name}=${ok}`).toBe(true);
      }
      for (const bad of [s.min - step, s.max + step]) {
        const r = await parseConfig({ ...base, [name]: String(bad) });
        expect(r.ok, `${name}=${bad}`).toBe(false);
        if (!r.ok) expect(r.errors.join("; ")).toContain(`${name}: must be`);
      }
      const r = await parseConfig({ ...base, [name]: "lots" });
      expect(r.ok).toBe(false);
    });

    it("refuses an empty value by name, never reading it as 0", async () => {
      for (const empty of ["", "  "]) {
        const r = await parseConfig({ ...base, [name]: empty });
        expect(r.ok, `${name}=${JSON.stringify(empty)}`).toBe(false);
        if (!r.ok) expect(r.errors.join("; ")).toContain(`${name}: is empty: remove it for the default`);
      }
    });

    it("refuses hex, octal, binary, exponent and signed forms, even of a number in range", async () => {
      // Each reads as a number in range for JavaScript's Number(): 0x10 = 16, 1e1 = 10, +5 = 5...
      for (const odd of ["0x10", "0o20", "0b11", "1e1", "5e0", "+5", "Infinity"]) {
        const r = await parseConfig({ ...base, PREFIX_TOKENS: "1024", [name]: odd });
        expect(r.ok, `${name}=${odd}`).toBe(false);
        if (!r.ok) expect(r.errors.join("; ")).toContain(`${name}: must be`);
      }
    });
  });

  it("derives once whether any backend takes a cache_salt (every request reads it)", async () => {
    const none = await parseConfig(base);
    const one = await parseConfig({
      ...base,
      BACKENDS: JSON.stringify([
        { id: "a", url: "http://10.0.0.1:8000", models: ["m"], kvCacheTokens: 1000 },
        { id: "b", url: "http://10.0.0.2:8000", models: ["m"], kvCacheTokens: 1000, cacheSalt: true },
      ]),
    });
    if (!none.ok || !one.ok) throw new Error("both configs are valid");
    expect(none.config.anyCacheSalt).toBe(false);
    expect(one.config.anyCacheSalt).toBe(true);
  });

  it("formats zod paths like BACKENDS[2].url", () => {
    expect(formatPath(["BACKENDS", 2, "url"])).toBe("BACKENDS[2].url");
  });

  it("caches per isolate by the raw strings: same strings → same object, changed secret → new", async () => {
    const a = await loadConfig(base);
    const b = await loadConfig({ ...base });
    expect(b).toBe(a);
    const c = await loadConfig({ ...base, GATEWAY_API_KEYS: "client-key-three-0003" });
    expect(c).not.toBe(a);
  });
});

/** The same-server refusal's text after its entries and model: it never quotes a url (/healthz is public). */
const SAME_SERVER =
  " (urls are compared with the host's case, a default port, trailing slashes and /v1 folded, and localhost, 127.0.0.1 and ::1 as one host): one engine listed twice is routed to as two, with twice its share of the load; list all its models in one entry (two entries on one hosted API are accepted with two different apiKeys: two accounts)";

// The ninth attacker pass (bench/results/red-team.md): operator mistakes each config accepted silently.
describe("config mistakes refused by name", () => {
  it("refuses an ADMIN_TOKEN that is also a gateway key: every client holding it would be an admin", async () => {
    const token = "shared-token-0123456789";
    const r = await parseConfig({
      ...base,
      GATEWAY_API_KEYS: `client-key-one-0001, ${token} max_concurrent=4`,
      ADMIN_TOKEN: token,
    });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors).toContain(
        "ADMIN_TOKEN: is also a client key in GATEWAY_API_KEYS: every client holding it could drain backends and reset affinity; give the admin a token of its own",
      );
      expect(r.errors.join(" ")).not.toContain(token);
    }
  });

  it("refuses one server listed twice for a model: one engine would be counted as two", async () => {
    const r = await parseConfig({
      ...base,
      BACKENDS: JSON.stringify([
        { id: "a", url: "http://10.0.0.1:8000", models: ["m"], kvCacheTokens: 1000 },
        { id: "b", url: "http://10.0.0.2:8000", models: ["m"], kvCacheTokens: 1000 },
        // The same address spelt another way: a trailing slash, the host's case.
        { id: "c", url: "HTTP://10.0.0.1:8000/", models: ["n", "m"], kvCacheTokens: 1000 },
      ]),
    });
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.errors).toEqual([
        `BACKENDS[2].url: entry "c" is the same server as BACKENDS[0] ("a") for model "m"${SAME_SERVER}`,
      ]);
    // One server under two models in two entries (a multi-model server) shares no pool: accepted.
    const apart = await parseConfig({
      ...base,
      BACKENDS: JSON.stringify([
        { id: "a", url: "http://10.0.0.1:8000", models: ["m"], kvCacheTokens: 1000 },
        { id: "b", url: "http://10.0.0.1:8000", models: ["n"], kvCacheTokens: 1000 },
      ]),
    });
    expect(apart.ok).toBe(true);
  });

  /** The errors of a config whose BACKENDS are these two entries of model "m" (ok: none). */
  async function pairErrors(a: Record<string, unknown>, b: Record<string, unknown>): Promise<string[]> {
    const r = await parseConfig({
      ...base,
      BACKENDS: JSON.stringify([
        { id: "a", models: ["m"], kvCacheTokens: 1000, ...a },
        { id: "b", models: ["m"], kvCacheTokens: 1000, ...b },
      ]),
    });
    return r.ok ? [] : r.errors;
  }

  it.each([
    ["http://localhost:8000", "http://127.0.0.1:8000"],
    ["http://127.1:8000", "http://[::1]:8000"],
    ["http://0.0.0.0:8000", "http://[::]:8000"],
    ["HTTP://Host:8000/", "http://host:8000"],
    ["http://gpu.example:80", "http://gpu.example"],
    ["https://gpu.example:443/", "https://gpu.example"],
    ["http://gpu.example:443", "https://gpu.example"],
    ["http://10.0.0.1:8000/engine-a/", "http://10.0.0.1:8000/engine-a"],
  ])("refuses %s and %s for one model: two spellings of one server, quoting neither", async (u1, u2) => {
    expect(await pairErrors({ url: u1 }, { url: u2 })).toEqual([
      `BACKENDS[1].url: entry "b" is the same server as BACKENDS[0] ("a") for model "m"${SAME_SERVER}`,
    ]);
  });

  it("refuses a url ending in /v1 beside the same server without it (the /v1 rule names it)", async () => {
    const errors = await pairErrors({ url: "http://10.0.0.1:8000" }, { url: "http://10.0.0.1:8000/v1" });
    expect(errors[0]).toMatch(/^BACKENDS\[1\]\.url: must be the server's base URL without \/v1/);
  });

  it.each([
    ["http://127.0.0.1:8000", "http://127.0.0.2:8000"],
    ["http://10.0.0.1:8000/engine-a", "http://10.0.0.1:8000/engine-b"],
    ["http://10.0.0.1:8000", "http://10.0.0.1:8001"],
    // Two names under .localhost are what a local proxy routes by (Traefik's Host(`whoami.localhost`)): one
    // listener, two engines behind it, as two path prefixes are.
    ["http://replica-a.localhost", "http://replica-b.localhost"],
    ["http://localhost:8080", "http://engine.localhost:8080"],
  ])("accepts %s and %s: two servers", async (u1, u2) => {
    expect(await pairErrors({ url: u1 }, { url: u2 })).toEqual([]);
  });

  it("accepts one hosted API listed twice with two different apiKeys (two accounts), never echoing a key", async () => {
    const url = "https://api.provider.example";
    expect(
      await pairErrors({ url, apiKey: "account-one-key-0001" }, { url, apiKey: "account-two-key-0002" }),
    ).toEqual([]);
    // The same key twice, or a key beside none, is one account listed twice: refused.
    for (const [ka, kb] of [
      ["account-one-key-0001", "account-one-key-0001"],
      ["account-one-key-0001", undefined],
      [undefined, undefined],
    ]) {
      const errors = await pairErrors({ url, apiKey: ka }, { url, apiKey: kb });
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/^BACKENDS\[1\]\.url: .*is the same server as BACKENDS\[0\] \("a"/);
      expect(errors[0]).not.toContain("account-one-key");
      expect(errors[0]).not.toContain(url);
    }
  });

  it("refuses a model name longer than a client's model may be, quoting it cut", async () => {
    const long = `m${"x".repeat(299)}`;
    const r = await parseConfig({
      ...base,
      BACKENDS: JSON.stringify([
        { id: "a", url: "http://10.0.0.1:8000", models: ["m", long, "y".repeat(256)], kvCacheTokens: 1 },
      ]),
    });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors).toEqual([
        `BACKENDS[0].models[1]: must be at most 256 characters, the longest model a client may send (got '${long.slice(0, 256)}… (300 characters)'): serve it under a shorter name (vLLM's --served-model-name)`,
      ]);
    }
  });

  it("refuses a model name with whitespace around it: no client would name it so", async () => {
    const r = await parseConfig({
      ...base,
      BACKENDS: JSON.stringify([
        { id: "a", url: "http://10.0.0.1:8000", models: ["m", "llama-3 "], kvCacheTokens: 1 },
      ]),
    });
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.errors).toEqual([
        "BACKENDS[0].models[1]: must not begin or end with whitespace (clients send the model name exactly as served)",
      ]);
  });

  it("refuses a var whose name is a near miss of one the gateway reads, naming the likely one", async () => {
    const r = await parseConfig({
      ...base,
      ROUTNG_POLICY: "round_robin",
      max_inflight_per_backend: "8",
      "ENGINE-SCRAPE-MS": "1000",
      // Not near any name the gateway reads, or not a string (a binding): left alone.
      SENTRY_DSN: "https://x",
      ROUTER: {} as unknown as string,
    } as Parameters<typeof parseConfig>[0]);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.errors).toEqual([
        "ROUTNG_POLICY: is not a var this gateway reads (did you mean ROUTING_POLICY?): rename it, or its setting stays at the default",
        "max_inflight_per_backend: is not a var this gateway reads (did you mean MAX_INFLIGHT_PER_BACKEND?): rename it, or its setting stays at the default",
        "ENGINE-SCRAPE-MS: is not a var this gateway reads (did you mean ENGINE_SCRAPE_MS?): rename it, or its setting stays at the default",
      ]);
  });

  it("a misspelt var fails the Worker's requests with a 503 naming it", async () => {
    const msg = await expectOpenAIError(
      await gatewayWithEnv({ SHADOWS: "on" } as Partial<Env>, "/v1/models", { headers: authHeaders() }),
      503,
      "gateway_misconfigured",
    );
    expect(msg).toContain("(SHADOWS)");
    const admin = { authorization: `Bearer ${env.ADMIN_TOKEN}` };
    const hz = await gatewayWithEnv({ SHADOWS: "on" } as Partial<Env>, "/healthz", { headers: admin });
    expect(JSON.stringify(await hz.json())).toContain(
      "SHADOWS: is not a var this gateway reads (did you mean SHADOW?)",
    );
  });
});

describe("invalid config through the Worker", () => {
  const broken = {
    BACKENDS: JSON.stringify([
      { id: "a", url: "http://127.0.0.1:1", models: [MODEL], kvCacheTokens: 1 },
      { id: "b", url: "http://127.0.0.1:2", models: [MODEL], kvCacheTokens: 1 },
      { id: "c", url: "gopher://x", models: [MODEL], kvCacheTokens: 1 },
    ]),
  };
  const chatInit = {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }] }),
  };

  it("answers every request with 503 naming the secret to fix, and where the reasons are", async () => {
    for (let i = 0; i < 2; i++) {
      const msg = await expectOpenAIError(
        await gatewayWithEnv(broken, "/v1/chat/completions", chatInit),
        503,
        "gateway_misconfigured",
      );
      expect(msg).toBe(
        "Gateway configuration is invalid (BACKENDS): the reasons are in the Worker's log (wrangler dev's terminal; wrangler tail) and on GET /healthz with the ADMIN_TOKEN as Bearer.",
      );
    }
  });

  it("tells the operator's log the bad var's value once, never the public answer", async () => {
    const spy = vi.spyOn(console, "error");
    try {
      const bad = { SHADOW: "yes-please", AB_PERCENT: "half" };
      for (let i = 0; i < 2; i++) {
        const res = await gatewayWithEnv(bad, "/healthz");
        expect(res.status).toBe(503);
        expect(await res.text()).not.toContain("yes-please");
      }
      const lines = spy.mock.calls.map((a) => String(a[0])).filter((l) => l.includes('"config_invalid"'));
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!).got).toEqual({ SHADOW: "yes-please", AB_PERCENT: "half" });
      // The secrets it was read with are nowhere in it.
      expect(lines[0]).not.toContain(env.ADMIN_TOKEN);
    } finally {
      spy.mockRestore();
    }
  });

  it("reports the same in /healthz, with status 503: the reasons to the admin only", async () => {
    // The reasons name backends and models (and position: a count); the public learns which secret to fix.
    const named = {
      BACKENDS: JSON.stringify([
        { id: "gpu-east-6", url: "http://127.0.0.1:1", models: ["secret-finetune"], kvCacheTokens: 1 },
        { id: "gpu-east-7", url: "http://127.0.0.1:1", models: ["secret-finetune"], kvCacheTokens: 1 },
      ]),
    };
    for (const headers of [{}, authHeaders(), { authorization: "Bearer not-the-admin-token" }]) {
      const res = await gatewayWithEnv(named, "/healthz", { headers });
      expect(res.status).toBe(503);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({
        status: "error",
        config: { ok: false, invalid: ["BACKENDS"], reasons: expect.stringContaining("Worker's log") },
      });
      for (const secret of ["gpu-east", "secret-finetune", "[1]"]) expect(text).not.toContain(secret);
    }
    const admin = { authorization: `Bearer ${env.ADMIN_TOKEN}` };
    for (const [vars, reason] of [
      [broken, "BACKENDS[2].url: must be http(s) without credentials"],
      [named, 'BACKENDS[1].url: entry "gpu-east-7" is the same server as BACKENDS[0] ("gpu-east-6")'],
    ] as const) {
      const res = await gatewayWithEnv(vars, "/healthz", { headers: admin });
      expect(res.status).toBe(503);
      const body = (await res.json()) as { status: string; config: { invalid: string[]; errors: string[] } };
      expect(body.status).toBe("error");
      expect(body.config.invalid).toEqual(["BACKENDS"]);
      expect(body.config.errors.join("\n")).toContain(reason);
    }
  });

  it("does not send the caller to /healthz with the ADMIN_TOKEN when the ADMIN_TOKEN is what is wrong", async () => {
    const msg = await expectOpenAIError(
      await gatewayWithEnv({ ADMIN_TOKEN: undefined }, "/v1/chat/completions", chatInit),
      503,
      "gateway_misconfigured",
    );
    expect(msg).toBe(
      "Gateway configuration is invalid (ADMIN_TOKEN): the reasons are in the Worker's log (wrangler dev's terminal; wrangler tail).",
    );
  });

  it("keeps the reasons from a token that is itself in doubt: one with an error, the public example, a client key", async () => {
    const reasons = async (vars: Partial<Env>, token: string) => {
      const res = await gatewayWithEnv({ ...vars, SHADOW: "yes" }, "/healthz", {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(503);
      return "errors" in ((await res.json()) as { config: object }).config;
    };
    expect(await reasons({}, env.ADMIN_TOKEN)).toBe(true);
    expect(await reasons({ ADMIN_TOKEN: "short" }, "short")).toBe(false);
    // The public example stands on a fleet on loopback (npm run dev, as config allows it there), nowhere else.
    expect(await reasons({ ADMIN_TOKEN: EXAMPLE_ADMIN_TOKEN }, EXAMPLE_ADMIN_TOKEN)).toBe(true);
    const remote = JSON.stringify([
      { id: "r", url: "https://gpu.example.com", models: [MODEL], kvCacheTokens: 1 },
    ]);
    expect(await reasons({ ADMIN_TOKEN: EXAMPLE_ADMIN_TOKEN, BACKENDS: remote }, EXAMPLE_ADMIN_TOKEN)).toBe(
      false,
    );
    expect(await reasons({ ADMIN_TOKEN: EXAMPLE_ADMIN_TOKEN, BACKENDS: "[{" }, EXAMPLE_ADMIN_TOKEN)).toBe(
      false,
    );
    const shared = "a-client-key-0123456789";
    expect(
      await reasons({ ADMIN_TOKEN: shared, GATEWAY_API_KEYS: `${env.GATEWAY_API_KEYS},${shared}` }, shared),
    ).toBe(false);
  });

  it("recovers on the next request once the secret is fixed", async () => {
    const res = await gatewayWithEnv({ BACKENDS: env.BACKENDS }, "/v1/models", { headers: authHeaders() });
    expect(res.status).toBe(200);
  });
});
