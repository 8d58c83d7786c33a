/**
 * PREFIX_SCOPE (src/worker/inference/prefix-scope.ts) through the real Worker and RouterDO: with `key`, one
 * gateway key cannot learn from the route headers whether another sent a prompt, even under the other's
 * tenant name, and a backend marked `cacheSalt` is sent a cache_salt of the scope; with `shared`, affinity
 * crosses keys as it always did. The suite's config has two keys (vitest.config.ts: test-client-key-alpha,
 * test-client-key-beta).
 */
import { describe, expect, it } from "vitest";
import { keyIdOf } from "../../src/worker/gateway-keys";
import { sha256 } from "../../src/worker/sha256";
import {
  ADMIN_TOKEN,
  BACKEND_KEY,
  chatBody,
  expectOpenAIError,
  faultServerAs,
  faultServerUrl,
  gatewayWithEnv,
  longPrompt,
  settle,
} from "./helpers";

const K1 = "test-client-key-alpha";
const K2 = "test-client-key-beta";

const reasonOf = (res: Response) => res.headers.get("x-prefix-gateway-route");
const expectedOf = (res: Response) => res.headers.get("x-prefix-gateway-cached-tokens-expected");

/** One chat request as `key` under `env`, read to its end and its lease released (affinity is learned then). */
async function ask(
  env: Partial<Env>,
  key: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  const res = await gatewayWithEnv(env, "/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body,
  });
  expect(res.status).toBe(200);
  await settle();
  return res;
}

describe("PREFIX_SCOPE=key", () => {
  const scoped = { PREFIX_SCOPE: "key" } as Partial<Env>;

  it("another key resending a key's prompt is routed as unseen: ring, 0 tokens expected", async () => {
    const secret = longPrompt(`merger-${crypto.randomUUID()}`);
    await ask(scoped, K1, chatBody(secret, "q1"));
    const again = await ask(scoped, K1, chatBody(secret, "q2"));
    // The key's own repeat still finds its prefix: the scope costs nothing within a key.
    expect(reasonOf(again)).toBe("affinity");
    expect(Number(expectedOf(again))).toBeGreaterThan(300);
    const probe = await ask(scoped, K2, chatBody(secret, "q3"));
    expect(reasonOf(probe)).toBe("ring");
    expect(expectedOf(probe)).toBe("0");
  });

  it("naming the other key's tenant does not reach its chain: a tenant is scoped under its key", async () => {
    // By body and by header, each against a prompt of its own: a probe is K2's own first send, so a second
    // probe of the same prompt would find K2's own chain (rightly).
    const byBody = { extra: { prompt_cache_key: "acme" }, headers: {} };
    const byHeader = { extra: {}, headers: { "x-prefix-cache-key": "acme" } };
    for (const named of [byBody, byHeader] as {
      extra: Record<string, unknown>;
      headers: Record<string, string>;
    }[]) {
      const secret = longPrompt(`tenant-${crypto.randomUUID()}`);
      await ask(scoped, K1, chatBody(secret, "q1", { prompt_cache_key: "acme" }));
      expect(reasonOf(await ask(scoped, K1, chatBody(secret, "q2", { prompt_cache_key: "acme" })))).toBe(
        "affinity",
      );
      const probe = await ask(scoped, K2, chatBody(secret, "q3", named.extra), named.headers);
      expect(reasonOf(probe)).toBe("ring");
      expect(expectedOf(probe)).toBe("0");
    }
  });

  it("a client's cache_salt that is not a non-empty string is a 400 on cache_salt", async () => {
    for (const cache_salt of [5, "", ["a"]]) {
      const res = await gatewayWithEnv(scoped, "/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${K1}`, "content-type": "application/json" },
        body: chatBody("hello", "hi", { cache_salt }),
      });
      await expectOpenAIError(res.clone(), 400, "invalid_request");
      expect(((await res.json()) as { error: { param: string } }).error.param).toBe("cache_salt");
    }
  });
});

describe("PREFIX_SCOPE=shared (the default)", () => {
  it("keeps today's behaviour: a prompt one key sent is found on affinity for another", async () => {
    for (const env of [{}, { PREFIX_SCOPE: "shared" }] as Partial<Env>[]) {
      const shared = longPrompt(`shared-${crypto.randomUUID()}`);
      const first = await ask(env, K1, chatBody(shared, "q1"));
      const other = await ask(env, K2, chatBody(shared, "q2"));
      expect(reasonOf(other)).toBe("affinity");
      expect(Number(expectedOf(other))).toBeGreaterThan(300);
      expect(other.headers.get("x-prefix-gateway-backend")).toBe(
        first.headers.get("x-prefix-gateway-backend"),
      );
    }
  });

  it("a client's cache_salt splits the chain too: the engine shares no block across salts, so neither does affinity", async () => {
    // The salt goes to the engine as sent (shared scope), and vLLM folds it into its first block's hash: a
    // prompt under another salt is cold there. Expecting a hit across salts would route on a cache that is not.
    const prompt = longPrompt(`salted-${crypto.randomUUID()}`);
    await ask({}, K1, chatBody(prompt, "q1", { cache_salt: "user-a" }));
    const sameSalt = await ask({}, K2, chatBody(prompt, "q2", { cache_salt: "user-a" }));
    expect(reasonOf(sameSalt)).toBe("affinity");
    const otherSalt = await ask({}, K1, chatBody(prompt, "q3", { cache_salt: "user-b" }));
    expect(reasonOf(otherSalt)).toBe("ring");
    expect(expectedOf(otherSalt)).toBe("0");
    const unsalted = await ask({}, K1, chatBody(prompt, "q4"));
    expect(reasonOf(unsalted)).toBe("ring");
  });
});

describe("the scope as the operator sees it", () => {
  it("/healthz names the scope and /admin/backends each backend's cacheSalt", async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    for (const [scope, salt] of [
      ["key", true],
      ["shared", false],
    ] as const) {
      const env = echoPool(`seen-${scope}`, salt, scope);
      const health = (await (await gatewayWithEnv(env, "/healthz", { headers: admin })).json()) as {
        config: { prefixScope?: string };
      };
      expect(health.config.prefixScope).toBe(scope);
      const list = (await (await gatewayWithEnv(env, "/admin/backends", { headers: admin })).json()) as {
        backends: { id: string; cacheSalt?: boolean }[];
      };
      expect(list.backends.map((b) => b.cacheSalt)).toEqual([salt]);
    }
  });
});

/** A pool of one echo backend (metrics-fault-server.ts: its one content event is the body it got). */
function echoPool(model: string, cacheSalt: boolean | undefined, scope: "key" | "shared"): Partial<Env> {
  return {
    PREFIX_SCOPE: scope,
    BACKENDS: JSON.stringify([
      {
        id: `${model}-1`,
        url: `${faultServerUrl()}/echo`,
        models: [model],
        apiKey: BACKEND_KEY,
        kvCacheTokens: 65536,
        ...(cacheSalt === undefined ? {} : { cacheSalt }),
      },
    ]),
  } as Partial<Env>;
}

/** The body the echo backend received. */
async function received(env: Partial<Env>, key: string, body: string): Promise<string> {
  const res = await gatewayWithEnv(env, "/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
  });
  return echoedBody(res);
}

/** The echo backend's one content event: the body it got. */
async function echoedBody(res: Response): Promise<string> {
  expect(res.status).toBe(200);
  let out = "";
  for (const event of (await res.text()).split("\n\n")) {
    if (!event.startsWith("data: {")) continue;
    const chunk = JSON.parse(event.slice(6)) as { choices: { delta?: { content?: string } }[] };
    out += chunk.choices[0]?.delta?.content ?? "";
  }
  return out;
}

const saltOf = (upstream: string): unknown => (JSON.parse(upstream) as { cache_salt?: unknown }).cache_salt;

describe("cache_salt sent upstream", () => {
  const body = (model: string, extra = "") =>
    `{"model":"${model}","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]${extra}}`;

  it("a cacheSalt backend gets a salt of the key's scope, appended; the rest of the body is the client's", async () => {
    const model = "salt-vllm";
    const env = echoPool(model, true, "key");
    const a1 = await received(env, K1, body(model));
    const salt1 = saltOf(a1);
    expect(salt1).toMatch(/^[0-9a-f]{64}$/);
    expect(a1).toBe(`${body(model).slice(0, -1)},"cache_salt":"${salt1}"}`);
    // Stable for the key (its engine cache is reused), another for another key, never the key or its id.
    expect(salt1).not.toContain(keyIdOf(await sha256(K1)));
    expect(saltOf(await received(env, K1, body(model)))).toBe(salt1);
    const salt2 = saltOf(await received(env, K2, body(model)));
    expect(salt2).not.toBe(salt1);
    // The tenant is part of the scope, as in the prefix hashes.
    const tenant = `,"prompt_cache_key":"acme"`;
    const t1 = saltOf(await received(env, K1, body(model, tenant)));
    expect(t1).not.toBe(salt1);
    expect(saltOf(await received(env, K2, body(model, tenant)))).not.toBe(t1);
  });

  it("a client's own cache_salt is combined with the key's scope: replaced by a hash of both", async () => {
    const model = "salt-client";
    const env = echoPool(model, true, "key");
    const own = `,"cache_salt":"user-42"`;
    const plain = saltOf(await received(env, K1, body(model)));
    const mine = await received(env, K1, body(model, own));
    const s1 = saltOf(mine);
    expect(s1).toMatch(/^[0-9a-f]{64}$/);
    expect(mine).toBe(body(model, `,"cache_salt":"${s1}"`));
    expect(s1).not.toBe(plain);
    // Another key naming the same salt lands in a cache of its own, not in K1's.
    expect(saltOf(await received(env, K2, body(model, own)))).not.toBe(s1);
    // Every copy of a duplicated member is replaced (JSON.parse keeps the last, other parsers the first).
    const twice = await received(env, K1, body(model, `,"cache_salt":"user-42","cache_salt":"other"`));
    expect(twice.match(/"cache_salt":"([0-9a-f]{64})"/g)).toHaveLength(2);
  });

  it("the body is chosen per backend: in one pool, only the cacheSalt backend is sent the salt", async () => {
    // A retry, or the next request, may land on a backend of the other kind: the salt follows the backend.
    const model = "salt-mixed";
    const env = {
      PREFIX_SCOPE: "key",
      BACKENDS: JSON.stringify(
        [true, false].map((cacheSalt, i) => ({
          id: `${model}-${i + 1}`,
          url: faultServerAs(i, "echo"),
          models: [model],
          apiKey: BACKEND_KEY,
          kvCacheTokens: 65536,
          cacheSalt,
        })),
      ),
    } as Partial<Env>;
    const served = new Set<string | null>();
    for (let i = 0; i < 16 && served.size < 2; i++) {
      const sent = `{"model":"${model}","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"${longPrompt(`mixed-${i}`, 20)}"}]}`;
      const res = await gatewayWithEnv(env, "/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${K1}`, "content-type": "application/json" },
        body: sent,
      });
      const backend = res.headers.get("x-prefix-gateway-backend");
      served.add(backend);
      const upstream = await echoedBody(res);
      if (backend === `${model}-1`) expect(saltOf(upstream)).toMatch(/^[0-9a-f]{64}$/);
      else expect(upstream).toBe(sent);
    }
    expect(served.size).toBe(2);
  });

  it("a backend not marked cacheSalt, or shared scope, gets the client's body unchanged", async () => {
    for (const [model, env] of [
      ["salt-sglang", echoPool("salt-sglang", undefined, "key")],
      ["salt-off", echoPool("salt-off", false, "key")],
      ["salt-shared", echoPool("salt-shared", true, "shared")],
    ] as const) {
      expect(await received(env, K1, body(model))).toBe(body(model));
      const own = `,"cache_salt":"user-42"`;
      expect(await received(env, K1, body(model, own))).toBe(body(model, own));
    }
  });
});
