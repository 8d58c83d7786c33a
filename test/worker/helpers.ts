/**
 * Helpers for the workerd tests: requests through the real Worker entry
 * (exports.default.fetch, or the module's fetch with a modified env), and
 * reads of the real RouterDO's and KeyLimiterDO's state through their RPC.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import type { KeyLimiterStats } from "../../durable-objects/key-limiter-rpc";
import type { StatsResult } from "../../durable-objects/rpc";
import { sha256 } from "../../src/config";
import { keyIdOf } from "../../src/gateway-keys";
import worker from "../../src/index";

export const MODEL = "test-model";
export const CLIENT_KEY = "test-key-alpha";
export const ADMIN_TOKEN = "test-admin-token-0123456789";

export function authHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${CLIENT_KEY}`, "content-type": "application/json", ...extra };
}

/** A request through the deployed shape of the Worker (its default export, bindings from the config). */
export function gateway(path: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(new Request(`https://gateway.test${path}`, init));
}

/** A request through the Worker with some bindings replaced (a rotated secret, a broken var, a spy). */
export async function gatewayWithEnv(
  overrides: Partial<Env>,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(`https://gateway.test${path}`, init),
    { ...env, ...overrides },
    ctx,
  );
  // Drain the body before waiting: the completion report is sent when the relay ends.
  const body = await res.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return new Response(body, res);
}

/**
 * Like gatewayWithEnv, but hands back the response unread (a stream to hold, cancel or read);
 * `settled()` waits for the request's waitUntil work (completion report, slot release).
 */
export async function openWithEnv(
  overrides: Partial<Env>,
  path: string,
  init: RequestInit = {},
): Promise<{ res: Response; settled(): Promise<void> }> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(`https://gateway.test${path}`, init),
    { ...env, ...overrides },
    ctx,
  );
  return { res, settled: () => waitOnExecutionContext(ctx) };
}

export function chatBody(system: string, user: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    model: MODEL,
    max_tokens: 4,
    messages: [
      { role: "system", content: system },
      { role: "user", content: user },
    ],
    ...extra,
  });
}

/** A system prompt long enough to span many 16-token blocks, unique per seed. */
export function longPrompt(seed: string, words = 120): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(`${seed}-w${i % 97}-${(i * 7919) % 1009}`);
  return out.join(" ");
}

export function chat(body: string, headers: Record<string, string> = {}): Promise<Response> {
  return gateway("/v1/chat/completions", { method: "POST", headers: authHeaders(headers), body });
}

export async function poolStats(model = MODEL): Promise<Extract<StatsResult, { ok: true }>> {
  const s = await env.ROUTER.getByName(model).stats();
  if (!s.ok) throw new Error(`pool ${model}: ${s.message}`);
  return s;
}

/** Waits until every lease of the pool is released (completion reports are sent via waitUntil). */
export async function settle(model = MODEL, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await env.ROUTER.getByName(model).stats();
    if (!s.ok || s.leases === 0) return;
    if (Date.now() > until) throw new Error(`pool ${model} still has ${s.leases} leases`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Sends a request, reads it to the end, waits for its lease to be released; returns the response. */
export async function chatAndSettle(body: string, headers: Record<string, string> = {}): Promise<Response> {
  const res = await chat(body, headers);
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  // No pause after it: a completed request gives back its slot in prefix_aware's prefill queue.
  await settle();
  return res;
}

export async function expectOpenAIError(res: Response, status: number, code: string): Promise<string> {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = (await res.json()) as {
    error: { message: string; type: string; param: unknown; code: string };
  };
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message).not.toMatch(/\n\s+at /); // never a stack trace
  return body.error.message;
}

export const SPARE_MODEL = "spare-model";
export const BACKEND_KEY = "emu-test-key";

/** Addresses of the two spare-model emulators (a test-only binding set in vitest.config.ts). */
export function spareUrls(): string[] {
  return JSON.parse((env as unknown as { TEST_SPARE_URLS: string }).TEST_SPARE_URLS) as string[];
}

/** The url of a test-model backend by id, from the BACKENDS binding. */
export function backendUrl(id: string): string {
  const list = JSON.parse(env.BACKENDS) as { id: string; url: string }[];
  const b = list.find((x) => x.id === id);
  if (b === undefined) throw new Error(`no backend ${id}`);
  return b.url;
}

/** The url of the backend that resets every stream after its first event (a test-only binding). */
export function faultyUrl(): string {
  return (env as unknown as { TEST_FAULTY_URL: string }).TEST_FAULTY_URL;
}

/** A rate-limiting binding like KEY_RATE_LIMITER with limit 3 per 60 s (declared in vitest.config.ts). */
export function testRateLimiter(): RateLimit {
  return (env as unknown as { TEST_KEY_RATE_LIMITER: RateLimit }).TEST_KEY_RATE_LIMITER;
}

/** The KeyLimiterDO of a gateway key, found the way the Worker finds it (by the key's id, never the key). */
export async function keyLimiter(key: string) {
  return env.KEY_LIMITER.getByName(keyIdOf(await sha256(key)));
}

export async function keyLimiterStats(key: string): Promise<KeyLimiterStats> {
  return (await keyLimiter(key)).stats();
}

/** Waits until a key holds `inflight` slots (releases are sent via waitUntil). */
export async function keyInflightReaches(key: string, inflight: number, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await keyLimiterStats(key);
    if (s.inflight === inflight) return;
    if (Date.now() > until) throw new Error(`key still holds ${s.inflight} slots, expected ${inflight}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
