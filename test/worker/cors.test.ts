/**
 * Opt-in CORS (CORS_ALLOW_ORIGINS) through the real Worker: off by default, a listed origin's preflight and
 * every kind of answer to it (JSON, stream, 401, 404, 429, 405), an unlisted origin handled as without CORS,
 * `*`, the admin API left out, and a malformed value refused at the edge.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CORS_MAX_AGE_SECONDS } from "../../src/routing/defaults";
import { loadConfig } from "../../src/worker/config";
import {
  ADMIN_TOKEN,
  authHeaders,
  chatBody,
  expectOpenAIError,
  gateway,
  gatewayWithEnv,
  MODEL,
  openWithEnv,
  testRateLimiter,
} from "./helpers";

const PAGE = "https://playground.example.com";
const OTHER = "https://evil.example.com";
const LISTED = { CORS_ALLOW_ORIGINS: `http://localhost:5173, ${PAGE}` };

/** What a browser sends before a cross-origin POST with a key and a JSON body. */
function preflight(origin: string, method = "POST"): RequestInit {
  return {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": method,
      "access-control-request-headers": "authorization,content-type,x-stainless-lang,x-stainless-retry-count",
    },
  };
}

/** A preflight through the Worker with LISTED (or other) bindings; its 204 has no body to drain. */
async function preflightWith(overrides: Partial<Env>, path: string, origin: string, method = "POST") {
  const { res, settled } = await openWithEnv(overrides, path, preflight(origin, method));
  await settled();
  return res;
}

function chatFrom(origin: string, extra: Record<string, unknown> = {}, key?: string): RequestInit {
  const headers = authHeaders({ origin });
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  return { method: "POST", headers, body: chatBody("You answer briefly.", `cors ${Math.random()}`, extra) };
}

function corsHeaders(res: Response): Record<string, string> {
  return Object.fromEntries([...res.headers].filter(([name]) => name.startsWith("access-control-")));
}

/** The answer a listed origin's page may read: its own origin back, the gateway's headers exposed. */
function expectReadableBy(res: Response, origin: string): void {
  expect(res.headers.get("access-control-allow-origin")).toBe(origin);
  expect(res.headers.get("access-control-expose-headers")).toContain("x-prefix-gateway-backend");
  expect(res.headers.get("access-control-expose-headers")).toContain("retry-after");
  if (origin !== "*") expect(res.headers.get("vary")).toMatch(/\bOrigin\b/);
  expect(res.headers.get("access-control-allow-credentials")).toBeNull();
}

describe("CORS off (the default)", () => {
  it("is declared off in wrangler.toml and parsed as off", async () => {
    expect(env.CORS_ALLOW_ORIGINS).toBe("");
    const r = await loadConfig(env);
    expect(r.ok && r.config.cors).toEqual({ mode: "off" });
  });

  it("answers a preflight 405 as before, and no answer carries CORS headers", async () => {
    const pre = await gateway("/v1/chat/completions", preflight(PAGE));
    expect(pre.status).toBe(405);
    expect(pre.headers.get("allow")).toBe("POST");
    expect(corsHeaders(pre)).toEqual({});
    const res = await gateway("/v1/chat/completions", chatFrom(PAGE));
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(corsHeaders(res)).toEqual({});
    expect(res.headers.get("vary")).toBeNull();
  });
});

describe("a listed origin", () => {
  it("gets its preflight answered 204 with what an OpenAI SDK page needs, before auth", async () => {
    for (const path of ["/v1/chat/completions", "/v1/completions", "/v1/models", `/v1/models/${MODEL}`]) {
      const res = await preflightWith(LISTED, path, PAGE);
      expect(res.status, path).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(PAGE);
      expect(res.headers.get("access-control-allow-methods")).toBe("GET, HEAD, POST");
      const allowed = res.headers.get("access-control-allow-headers")!.split(", ");
      for (const h of ["authorization", "content-type", "x-stainless-lang", "x-stainless-retry-count"])
        expect(allowed).toContain(h);
      expect(res.headers.get("access-control-max-age")).toBe(String(CORS_MAX_AGE_SECONDS));
      expect(res.headers.get("vary")).toBe("Origin");
      expect(res.headers.get("x-request-id")).not.toBeNull();
    }
    // The other listed origin too.
    const local = await preflightWith(LISTED, "/v1/models", "http://localhost:5173", "GET");
    expect(local.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
  });

  it("can read a JSON answer, and every gateway header on it is exposed", async () => {
    const res = await gatewayWithEnv(LISTED, "/v1/chat/completions", chatFrom(PAGE));
    expect(res.status).toBe(200);
    expectReadableBy(res, PAGE);
    // Every header a page cannot read without being told (not CORS-safelisted) is in Expose-Headers.
    const safelisted = ["cache-control", "content-language", "content-length", "content-type", "expires"];
    const exposed = res.headers.get("access-control-expose-headers")!.split(", ");
    const hidden = [...res.headers.keys()].filter(
      (h) =>
        !h.startsWith("access-control-") && h !== "vary" && !safelisted.includes(h) && !exposed.includes(h),
    );
    expect(hidden).toEqual([]);
    expect(exposed).toContain("x-prefix-gateway-route");
  });

  it("can read a streamed answer", async () => {
    const { res, settled } = await openWithEnv(
      LISTED,
      "/v1/chat/completions",
      chatFrom(PAGE, { stream: true }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expectReadableBy(res, PAGE);
    expect(await res.text()).toContain("data: [DONE]");
    await settled();
  });

  it("can read the gateway's errors: 401, 404, 400, 405 and models", async () => {
    const wrongKey = await gatewayWithEnv(LISTED, "/v1/chat/completions", chatFrom(PAGE, {}, "not-a-key"));
    expectReadableBy(wrongKey, PAGE);
    await expectOpenAIError(wrongKey, 401, "invalid_api_key");
    const unknownModel = await gatewayWithEnv(
      LISTED,
      "/v1/chat/completions",
      chatFrom(PAGE, { model: "nope" }),
    );
    expectReadableBy(unknownModel, PAGE);
    expect(unknownModel.status).toBe(404);
    const badJson = await gatewayWithEnv(LISTED, "/v1/chat/completions", {
      method: "POST",
      headers: authHeaders({ origin: PAGE }),
      body: "{",
    });
    expectReadableBy(badJson, PAGE);
    expect(badJson.status).toBe(400);
    // Not a preflight (no Access-Control-Request-Method): the method check answers, readably.
    const options = await gatewayWithEnv(LISTED, "/v1/chat/completions", {
      method: "OPTIONS",
      headers: { origin: PAGE },
    });
    expect(options.status).toBe(405);
    expectReadableBy(options, PAGE);
    const models = await gatewayWithEnv(LISTED, "/v1/models", { headers: authHeaders({ origin: PAGE }) });
    expect(models.status).toBe(200);
    expectReadableBy(models, PAGE);
  });

  it("can read a 429 and its retry-after", async () => {
    // The test binding allows 3 per 60-second window; a window that rolls over mid-test is retried once.
    for (let attempt = 0; ; attempt++) {
      const key = `cors-rate-${crypto.randomUUID()}`;
      const bindings = { ...LISTED, GATEWAY_API_KEYS: key, KEY_RATE_LIMITER: testRateLimiter() };
      const window = Math.floor(Date.now() / 60_000);
      const answers: Response[] = [];
      for (let i = 0; i < 4; i++)
        answers.push(await gatewayWithEnv(bindings, "/v1/chat/completions", chatFrom(PAGE, {}, key)));
      if (Math.floor(Date.now() / 60_000) !== window && attempt === 0) continue;
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 429]);
      const refused = answers[3]!;
      expectReadableBy(refused, PAGE);
      expect(refused.headers.get("access-control-expose-headers")!.split(", ")).toContain("retry-after");
      await expectOpenAIError(refused, 429, "rate_limit_exceeded");
      return;
    }
  });

  it("gets no CORS from the admin API, /metrics, the dashboard or /healthz", async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, origin: PAGE };
    for (const path of ["/admin/stats", "/metrics", "/admin/dashboard", "/healthz"]) {
      const res = await gatewayWithEnv(LISTED, path, { headers: admin });
      expect(res.status, path).toBe(200);
      expect(corsHeaders(res), path).toEqual({});
      const pre = await preflightWith(LISTED, path, PAGE, "GET");
      expect(pre.status, path).toBe(405);
      expect(corsHeaders(pre), path).toEqual({});
    }
  });
});

describe("an unlisted origin", () => {
  it("is handled as without CORS: preflight 405, answers served without CORS headers, never reflected", async () => {
    for (const origin of [OTHER, `${PAGE}.evil.example`, "null", "http://localhost:5174"]) {
      const pre = await preflightWith(LISTED, "/v1/chat/completions", origin);
      expect(pre.status, origin).toBe(405);
      expect(corsHeaders(pre), origin).toEqual({});
      const res = await gatewayWithEnv(LISTED, "/v1/chat/completions", chatFrom(origin));
      expect(res.status, origin).toBe(200);
      expect(corsHeaders(res), origin).toEqual({});
      // The answer depends on the origin: caches must keep them apart.
      expect(res.headers.get("vary")).toBe("Origin");
    }
  });
});

describe("CORS_ALLOW_ORIGINS = *", () => {
  it("answers any origin's preflight and lets any page read the answers, with * (never reflected)", async () => {
    const any = { CORS_ALLOW_ORIGINS: "*" };
    const pre = await preflightWith(any, "/v1/chat/completions", OTHER);
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    // `*` in Allow-Headers would not cover Authorization: it is listed by name.
    expect(pre.headers.get("access-control-allow-headers")).toContain("authorization");
    const res = await gatewayWithEnv(any, "/v1/chat/completions", chatFrom(OTHER));
    expect(res.status).toBe(200);
    expectReadableBy(res, "*");
    const wrongKey = await gatewayWithEnv(any, "/v1/models", {
      headers: { origin: OTHER, authorization: "Bearer nope" },
    });
    expect(wrongKey.status).toBe(401);
    expectReadableBy(wrongKey, "*");
  });
});

describe("a malformed CORS_ALLOW_ORIGINS", () => {
  it.each([
    [
      "https://playground.example.com/",
      'CORS_ALLOW_ORIGINS[0]: "https://playground.example.com/" is not an origin',
    ],
    [`${PAGE}, https://*.example.com`, 'CORS_ALLOW_ORIGINS[1]: "https://*.example.com" has a wildcard'],
    [`*, ${PAGE}`, "CORS_ALLOW_ORIGINS: * must stand alone"],
    ["null", "CORS_ALLOW_ORIGINS[0]: null is the origin of sandboxed"],
  ])(
    "%j is a 503 naming the var on every request, the reason in the admin's /healthz",
    async (value, expected) => {
      const bad = { CORS_ALLOW_ORIGINS: value };
      const msg = await expectOpenAIError(
        await gatewayWithEnv(bad, "/v1/chat/completions", chatFrom(PAGE)),
        503,
        "gateway_misconfigured",
      );
      expect(msg).toContain("(CORS_ALLOW_ORIGINS)");
      const health = await gatewayWithEnv(bad, "/healthz", {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(health.status).toBe(503);
      expect(JSON.stringify(await health.json())).toContain(expected.replaceAll('"', '\\"'));
    },
  );
});
