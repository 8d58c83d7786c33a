/**
 * Per-key limits through the real Worker, against real backends: requests in
 * flight (the key's KeyLimiterDO) and requests per period (a Workers Rate
 * Limiting binding), 429 with retry-after in OpenAI's shape, one key's limit
 * never touching another's, every slot released however the response ends,
 * no limiter call when the limits are off, and a failing limiter never
 * failing a request.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { fingerprint } from "../../src/worker/log";
import {
  BACKEND_KEY,
  chatBody,
  expectOpenAIError,
  gatewayWithEnv,
  keyInflightReaches,
  keyLimiterStats,
  longPrompt,
  MODEL,
  openWithEnv,
  SPARE_MODEL,
  spareUrls,
  testRateLimiter,
  withBackendFault,
} from "./helpers";

/** A key of its own per test: limiter state never leaks between tests. */
const freshKey = (name: string) => `kl-${name}-${crypto.randomUUID()}`;

function chatInit(key: string, body: string): RequestInit {
  return {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
  };
}

const longStream = (seed: string) =>
  chatBody(longPrompt(seed, 40), "a long answer", { stream: true, max_tokens: 400 });
const short = (seed: string) => chatBody(`You are terse. ${seed}`, "hi", { max_tokens: 2 });

/** Captures the request log lines (one JSON object per request) written while a test runs. */
function captureLog(): () => Record<string, unknown>[] {
  // A second spyOn in one test returns the same spy: read only the calls made after this capture began
  // (the rate test retries once when the limiter's window rolls over, and must not count its first try).
  const spy = vi.spyOn(console, "log");
  const from = spy.mock.calls.length;
  return () =>
    spy.mock.calls
      .slice(from)
      .map((args) => String(args[0]))
      .filter((l) => l.startsWith('{"msg":"request"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
}

afterEach(() => {
  vi.restoreAllMocks();
});

async function readAll(res: Response): Promise<{ chunks: number; text: string }> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let chunks = 0;
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { chunks, text };
    chunks++;
    text += dec.decode(value, { stream: true });
  }
}

describe("requests in flight per key", () => {
  it("refuses the N+1-th concurrent request of a key with 429 and retry-after; another key is unaffected", async () => {
    const a = freshKey("a");
    const b = freshKey("b");
    const keys = { GATEWAY_API_KEYS: `${a} max_concurrent=2, ${b} max_concurrent=2` };
    const log = captureLog();
    const held = [
      await openWithEnv(keys, "/v1/chat/completions", chatInit(a, longStream("held-1"))),
      await openWithEnv(keys, "/v1/chat/completions", chatInit(a, longStream("held-2"))),
    ];
    for (const h of held) expect(h.res.status).toBe(200);
    expect((await keyLimiterStats(a)).inflight).toBe(2);

    // The third, streamed or not, is refused before it reaches the router or a backend.
    const third = await gatewayWithEnv(keys, "/v1/chat/completions", chatInit(a, short("third")));
    expect(third.headers.get("retry-after")).toBe("1");
    const body = (await third.clone().json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("requests");
    expect(body.error.message).toContain("limit 2");
    await expectOpenAIError(third, 429, "rate_limit_exceeded");
    expect(third.headers.get("x-prefix-gateway-backend")).toBeNull();
    const refusedLine = log().find((l) => l.status === 429);
    expect(refusedLine).toMatchObject({
      limitedBy: "concurrency",
      keyInflight: 2,
      error: "rate_limit_exceeded",
    });
    // The log names the key by its fingerprint, never by the key.
    expect(refusedLine?.key).toBe(await fingerprint(a));

    // What is wrong with a request is told before the 429 (which an SDK retries, to be refused again):
    // a bad body, an unserved model. Neither takes a slot.
    const bad = await gatewayWithEnv(keys, "/v1/chat/completions", chatInit(a, '{"model":'));
    await expectOpenAIError(bad, 400, "invalid_json");
    const unserved = await gatewayWithEnv(
      keys,
      "/v1/chat/completions",
      chatInit(a, JSON.stringify({ model: "not-served", messages: [{ role: "user", content: "x" }] })),
    );
    await expectOpenAIError(unserved, 404, "model_not_found");
    expect(await keyLimiterStats(a)).toMatchObject({ inflight: 2, acquired: 2, refused: 1 });

    // Another key, with the same limit, is served while `a` is full.
    const other = await gatewayWithEnv(keys, "/v1/chat/completions", chatInit(b, short("other")));
    expect(other.status).toBe(200);
    expect((await keyLimiterStats(b)).inflight).toBe(0);

    // The held streams end (client walks away): `a` is served again.
    for (const h of held) {
      await h.res.body!.cancel();
      await h.settled();
    }
    expect((await keyLimiterStats(a)).inflight).toBe(0);
    const again = await gatewayWithEnv(keys, "/v1/chat/completions", chatInit(a, short("again")));
    expect(again.status).toBe(200);
  });

  it("releases the slot when a stream completes, relaying it chunk by chunk through the wrapper", async () => {
    const k = freshKey("done");
    const keys = { GATEWAY_API_KEYS: `${k} max_concurrent=1` };
    const { res, settled } = await openWithEnv(
      keys,
      "/v1/chat/completions",
      chatInit(k, chatBody(longPrompt("done", 40), "q", { stream: true, max_tokens: 24 })),
    );
    expect(res.status).toBe(200);
    expect((await keyLimiterStats(k)).inflight).toBe(1);
    const { chunks, text } = await readAll(res);
    expect(chunks).toBeGreaterThan(10);
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    await settled();
    const s = await keyLimiterStats(k);
    expect(s).toMatchObject({ inflight: 0, acquired: 1, released: 1, expired: 0 });
  });

  it("releases the slot of a non-streamed request when its body has been read", async () => {
    const k = freshKey("json");
    const keys = { GATEWAY_API_KEYS: `${k} max_concurrent=1` };
    for (let i = 0; i < 3; i++) {
      const res = await gatewayWithEnv(keys, "/v1/chat/completions", chatInit(k, short(`json-${i}`)));
      expect(res.status).toBe(200);
    }
    expect(await keyLimiterStats(k)).toMatchObject({ inflight: 0, acquired: 3, released: 3, refused: 0 });
  });

  it("releases the slot when the client cancels mid-stream", async () => {
    const k = freshKey("cancel");
    const keys = { GATEWAY_API_KEYS: `${k} max_concurrent=1` };
    const { res, settled } = await openWithEnv(
      keys,
      "/v1/chat/completions",
      chatInit(k, longStream("cancel")),
    );
    const reader = res.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    expect((await keyLimiterStats(k)).inflight).toBe(1);
    await reader.cancel("client went away");
    await settled();
    expect(await keyLimiterStats(k)).toMatchObject({ inflight: 0, released: 1, expired: 0 });
    const next = await gatewayWithEnv(keys, "/v1/chat/completions", chatInit(k, short("after-cancel")));
    expect(next.status).toBe(200);
  });

  it("releases the slot when the backend breaks the stream mid-way", async () => {
    const k = freshKey("broken");
    // One spare emulator, cutting only the streams that carry this test's marker (shared emulators).
    const marker = `cut-${crypto.randomUUID()}`;
    const [url] = spareUrls() as [string];
    const env1 = {
      GATEWAY_API_KEYS: `${k} max_concurrent=1`,
      BACKENDS: JSON.stringify([
        { id: "cutting", url, models: [SPARE_MODEL], apiKey: BACKEND_KEY, kvCacheTokens: 262144 },
      ]),
    };
    const body = JSON.stringify({
      model: SPARE_MODEL,
      stream: true,
      max_tokens: 400,
      messages: [{ role: "user", content: `${marker} tell me a story` }],
    });
    await withBackendFault(url, { kind: "cut", afterChunks: 2, match: marker }, async () => {
      const { res, settled } = await openWithEnv(env1, "/v1/chat/completions", chatInit(k, body));
      expect(res.status).toBe(200);
      expect((await keyLimiterStats(k)).inflight).toBe(1);
      // The relay ends a cut stream with an SSE error event (or, were it to error the body, the read throws).
      const text = await readAll(res).then(
        (r) => r.text,
        () => "",
      );
      expect(text).not.toContain("[DONE]");
      await settled();
    });
    expect(await keyLimiterStats(k)).toMatchObject({ inflight: 0, released: 1, expired: 0 });
  });

  it("releases the slot at once when the request ends in an error response (backend unreachable)", async () => {
    const k = freshKey("refused");
    const env1 = {
      GATEWAY_API_KEYS: `${k} max_concurrent=1`,
      // Nothing listens on port 9 of loopback: the connection is refused.
      BACKENDS: JSON.stringify([
        { id: "gone", url: "http://127.0.0.1:9", models: [MODEL], kvCacheTokens: 4096 },
      ]),
    };
    const res = await gatewayWithEnv(env1, "/v1/chat/completions", chatInit(k, short("gone")));
    await expectOpenAIError(res, 502, "backend_unreachable");
    expect(await keyLimiterStats(k)).toMatchObject({ inflight: 0, acquired: 1, released: 1 });
  });

  it("applies KEY_MAX_CONCURRENT to keys without an override, and max_concurrent=0 exempts a key", async () => {
    const plain = freshKey("plain");
    const exempt = freshKey("exempt");
    const keys = { GATEWAY_API_KEYS: `${plain}, ${exempt} max_concurrent=0`, KEY_MAX_CONCURRENT: "1" };
    const held = await openWithEnv(keys, "/v1/chat/completions", chatInit(plain, longStream("plain")));
    const refused = await gatewayWithEnv(keys, "/v1/chat/completions", chatInit(plain, short("plain-2")));
    expect(refused.status).toBe(429);
    const heldExempt = await openWithEnv(keys, "/v1/chat/completions", chatInit(exempt, longStream("ex")));
    const served = await gatewayWithEnv(keys, "/v1/chat/completions", chatInit(exempt, short("ex-2")));
    expect(served.status).toBe(200);
    for (const h of [held, heldExempt]) {
      await h.res.body!.cancel();
      await h.settled();
    }
    await keyInflightReaches(plain, 0);
  });
});

describe("requests per period per key (rate-limiting binding)", () => {
  it("refuses past the limit with 429 and retry-after, counting each key on its own", async () => {
    // The test binding allows 3 per 60-second window; a window that rolls over mid-test is retried once.
    for (let attempt = 0; ; attempt++) {
      const a = freshKey("rate-a");
      const b = freshKey("rate-b");
      const bindings = { GATEWAY_API_KEYS: `${a}, ${b}`, KEY_RATE_LIMITER: testRateLimiter() };
      const window = Math.floor(Date.now() / 60_000);
      const log = captureLog();
      const statuses: number[] = [];
      let refused: Response | undefined;
      for (let i = 0; i < 4; i++) {
        const res = await gatewayWithEnv(bindings, "/v1/chat/completions", chatInit(a, short(`rate-${i}`)));
        statuses.push(res.status);
        if (res.status === 429) refused = res;
      }
      const other = await gatewayWithEnv(bindings, "/v1/chat/completions", chatInit(b, short("rate-b")));
      if (Math.floor(Date.now() / 60_000) !== window && attempt === 0) continue;
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(other.status).toBe(200);
      const retryAfter = Number(refused!.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      const msg = await expectOpenAIError(refused!, 429, "rate_limit_exceeded");
      expect(msg).toContain(`try again in ${retryAfter}s`);
      expect(log().filter((l) => l.limitedBy === "rate")).toHaveLength(1);
      return;
    }
  });

  it("uses the key's id, never the key, as the counter's key", async () => {
    const k = freshKey("which");
    const seen: string[] = [];
    const spy: RateLimit = {
      limit: async (o) => {
        seen.push(o.key);
        return { success: true };
      },
    };
    await gatewayWithEnv(
      { GATEWAY_API_KEYS: k, KEY_RATE_LIMITER: spy },
      "/v1/chat/completions",
      chatInit(k, short("w")),
    );
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/^[0-9a-f]{16}$/);
    expect(seen[0]).not.toContain(k);
  });
});

/** Bindings that count every call made to them. */
function spies(acquire: () => Promise<unknown> = async () => ({ ok: true, inflight: 1 })) {
  const calls = { rate: 0, getByName: 0, acquire: 0, release: 0 };
  const rate: RateLimit = {
    limit: async () => {
      calls.rate++;
      return { success: true };
    },
  };
  const ns = {
    getByName: () => {
      calls.getByName++;
      return {
        acquire: () => {
          calls.acquire++;
          return acquire();
        },
        release: async () => {
          calls.release++;
          return { ok: true, inflight: 0 };
        },
      };
    },
  } as unknown as Env["KEY_LIMITER"];
  return { calls, bindings: { KEY_RATE_LIMITER: rate, KEY_LIMITER: ns } };
}

describe("limits off, limiters failing", () => {
  it("makes no limiter call at all when both limits are off (and calls both when on)", async () => {
    const k = freshKey("off");
    const off = spies();
    const res = await gatewayWithEnv(
      { ...off.bindings, GATEWAY_API_KEYS: k, KEY_RATE_LIMIT: "off", KEY_MAX_CONCURRENT: "0" },
      "/v1/chat/completions",
      chatInit(k, short("off")),
    );
    expect(res.status).toBe(200);
    expect(off.calls).toEqual({ rate: 0, getByName: 0, acquire: 0, release: 0 });

    const on = spies();
    const res2 = await gatewayWithEnv(
      { ...on.bindings, GATEWAY_API_KEYS: k, KEY_RATE_LIMIT: "on", KEY_MAX_CONCURRENT: "4" },
      "/v1/chat/completions",
      chatInit(k, short("on")),
    );
    expect(res2.status).toBe(200);
    expect(on.calls).toEqual({ rate: 1, getByName: 1, acquire: 1, release: 1 });
  });

  it("guards /v1/completions as well, and leaves /v1/models alone", async () => {
    const k = freshKey("routes");
    const on = spies();
    const bindings = { ...on.bindings, GATEWAY_API_KEYS: `${k} max_concurrent=4` };
    const models = await gatewayWithEnv(bindings, "/v1/models", {
      headers: { authorization: `Bearer ${k}` },
    });
    expect(models.status).toBe(200);
    expect(on.calls).toEqual({ rate: 0, getByName: 0, acquire: 0, release: 0 });
    const comp = await gatewayWithEnv(bindings, "/v1/completions", {
      ...chatInit(k, JSON.stringify({ model: MODEL, prompt: "hello", max_tokens: 2 })),
    });
    expect(comp.status).toBe(200);
    expect(on.calls).toEqual({ rate: 1, getByName: 1, acquire: 1, release: 1 });
  });

  it("serves the request when the KeyLimiterDO throws, and says so in the log line", async () => {
    const k = freshKey("throws");
    const broken = spies(async () => {
      throw new Error("Durable Object reset because its code was updated.");
    });
    const log = captureLog();
    const res = await gatewayWithEnv(
      { ...broken.bindings, GATEWAY_API_KEYS: `${k} max_concurrent=1` },
      "/v1/chat/completions",
      chatInit(k, short("throws")),
    );
    expect(res.status).toBe(200);
    expect(log().at(-1)).toMatchObject({ status: 200, concurrencyFailOpen: "error" });
  });

  it("serves the request when the KeyLimiterDO does not answer within its deadline, and still releases", async () => {
    const k = freshKey("slow");
    const hung = spies(() => new Promise(() => {}));
    const log = captureLog();
    const started = Date.now();
    const res = await gatewayWithEnv(
      { ...hung.bindings, GATEWAY_API_KEYS: `${k} max_concurrent=1` },
      "/v1/chat/completions",
      chatInit(k, short("slow")),
    );
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(log().at(-1)).toMatchObject({ status: 200, concurrencyFailOpen: "timeout" });
    // The grant may only have been late: the slot is released anyway, through the same stub.
    expect(hung.calls.release).toBe(1);
  });

  it("serves the request when the rate limiter throws or is not bound", async () => {
    const k = freshKey("rate-fail");
    const log = captureLog();
    const throwing: RateLimit = {
      limit: async () => {
        throw new Error("rate limiter unavailable");
      },
    };
    const r1 = await gatewayWithEnv(
      { GATEWAY_API_KEYS: k, KEY_RATE_LIMITER: throwing },
      "/v1/chat/completions",
      chatInit(k, short("rf-1")),
    );
    expect(r1.status).toBe(200);
    expect(log().at(-1)).toMatchObject({ rateLimitFailOpen: "error" });
    const unbound = { ...env, KEY_RATE_LIMITER: undefined } as unknown as Partial<Env>;
    const r2 = await gatewayWithEnv(
      { ...unbound, GATEWAY_API_KEYS: k },
      "/v1/chat/completions",
      chatInit(k, short("rf-2")),
    );
    expect(r2.status).toBe(200);
    expect(log().at(-1)).toMatchObject({ rateLimitFailOpen: "unbound" });
  });
});
