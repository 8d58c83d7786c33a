/**
 * Helpers for the workerd tests: requests through the real Worker entry
 * (exports.default.fetch, or the module's fetch with a modified env), reads
 * of the real RouterDO's and KeyLimiterDO's state through their RPC, and
 * faults injected into the backend emulators over their HTTP control endpoint.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import type { ControlState, FaultSpec, HealthOverride } from "../../bench/emulator/fault-spec";
import worker from "../../src/index";
import { SETTINGS } from "../../src/routing/defaults";
import { keyIdOf } from "../../src/worker/gateway-keys";
import type { KeyLimiterStats } from "../../src/worker/key-limits/key-limiter-rpc";
import type { RouteInput, StatsResult } from "../../src/worker/router/router-rpc";
import { sha256 } from "../../src/worker/sha256";

export const MODEL = "test-model";
export const CLIENT_KEY = "test-client-key-alpha";
/** A key with no per-key in-flight limit (max_concurrent=0): no KeyLimiterDO slot, as by default (vitest.config.ts). */
export const UNLIMITED_KEY = "test-key-unlimited";
export const ADMIN_TOKEN = "test-admin-token-0123456789";

export function authHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${CLIENT_KEY}`, "content-type": "application/json", ...extra };
}

/**
 * The real ROUTER namespace, except that every stub's route() goes through
 * `route`, which gets the call's input and the real route() to pass it on to
 * (or not); every other method is the real one. For tests that watch or
 * break the Worker → RouterDO call (pass it to gatewayWithEnv as ROUTER).
 */
export function interceptRoute(
  route: (input: RouteInput, real: (input: RouteInput) => Promise<unknown>) => Promise<unknown>,
): Env["ROUTER"] {
  return interceptRouterMethod(
    "route",
    (target) => (input: RouteInput) => route(input, (i) => target.route(i)),
  );
}

/**
 * The real ROUTER namespace, except that every stub's `method` is the function `replace` makes from the
 * real stub; every other method is the real one.
 */
export function interceptRouterMethod(
  method: string,
  replace: (target: ReturnType<Env["ROUTER"]["getByName"]>) => unknown,
): Env["ROUTER"] {
  const real = env.ROUTER;
  return {
    ...real,
    getByName(name: string, options?: DurableObjectNamespaceGetDurableObjectOptions) {
      const stub = real.getByName(name, options);
      return new Proxy(stub, {
        get(target, prop, receiver) {
          if (prop !== method) return Reflect.get(target, prop, receiver);
          return replace(target);
        },
      });
    },
  } as Env["ROUTER"];
}

/**
 * The route-call deadline the Worker ships with (ROUTER_TIMEOUT_MS, 50 ms), for a test of what happens past
 * it. Every other test routes with the suite's own binding (vitest.config.ts: 10 s, a deadline no loaded test
 * machine misses), so that its decisions are the RouterDO's, never the Worker's local fail-open fallback.
 */
export const DEPLOYED_ROUTER_DEADLINE = {
  ROUTER_TIMEOUT_MS: String(SETTINGS.ROUTER_TIMEOUT_MS.default),
} as const;

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

/** A BACKENDS entry for a test's own config: the emulators' key, weight 1, a 256k-token cache. */
export function backendRow(id: string, url: string, models: string[]) {
  return { id, url, models, apiKey: BACKEND_KEY, weight: 1, kvCacheTokens: 262144 };
}

/** Addresses of the two spare-model emulators (a test-only binding set in vitest.config.ts). */
export function spareUrls(): string[] {
  return JSON.parse((env as unknown as { TEST_SPARE_URLS: string }).TEST_SPARE_URLS) as string[];
}

/** The spare-model pool as the backends `ids` (the i-th on the i-th spare emulator), in two RouterDO cells. */
export function spareCellsEnv(ids: readonly string[]): { BACKENDS: string; ROUTER_CELLS: string } {
  const urls = spareUrls();
  return {
    BACKENDS: JSON.stringify(
      ids.map((id, i) => ({
        id,
        url: urls[i % urls.length],
        models: [SPARE_MODEL],
        apiKey: BACKEND_KEY,
        weight: 1,
        kvCacheTokens: 262144,
      })),
    ),
    ROUTER_CELLS: "2",
  };
}

export const FAULT_MODEL = "fault-model";

/** Addresses of the three fault-model emulators: only fault-injection tests use them. */
export function faultUrls(): string[] {
  return JSON.parse((env as unknown as { TEST_FAULT_URLS: string }).TEST_FAULT_URLS) as string[];
}

/** Two more fault-model emulators, cell-empty.test.ts's alone (a cell's second backend). */
export function cellFaultUrls(): string[] {
  return JSON.parse((env as unknown as { TEST_CELL_FAULT_URLS: string }).TEST_CELL_FAULT_URLS) as string[];
}

/** The fake backend of test/worker/metrics-fault-server.ts (a test-only binding set in vitest.config.ts). */
export function faultServerUrl(): string {
  return (env as unknown as { TEST_METRICS_FAULT_URL: string }).TEST_METRICS_FAULT_URL;
}

/**
 * The fake backend under `path`, as the `i`th of several backends: from the second on under an address of its
 * own (`${url}/_<i>/${path}`, which the server reads as `/${path}`), since config refuses one url listed twice
 * for a model.
 */
export function faultServerAs(i: number, path: string): string {
  return i === 0 ? `${faultServerUrl()}/${path}` : `${faultServerUrl()}/_${i}/${path}`;
}

/**
 * A pool of its own (a model only the calling case uses) whose `backends` backends (one by default, ids
 * `<model>-1`, `<model>-2`, …) are the fake backend under `path` (metrics-fault-server.ts:
 * `${url}/${path}/v1/chat/completions` answers the way that path names).
 */
export function faultServerPool(model: string, path: string, backends = 1): { BACKENDS: string } {
  return {
    BACKENDS: JSON.stringify(
      Array.from({ length: backends }, (_, i) => ({
        id: `${model}-${i + 1}`,
        url: faultServerAs(i, path),
        models: [model],
        apiKey: BACKEND_KEY,
        weight: 1,
        kvCacheTokens: 65536,
      })),
    ),
  };
}

/** The url of a test-model backend by id, from the BACKENDS binding. */
export function backendUrl(id: string): string {
  const list = JSON.parse(env.BACKENDS) as { id: string; url: string }[];
  const b = list.find((x) => x.id === id);
  if (b === undefined) throw new Error(`no backend ${id}`);
  return b.url;
}

/**
 * Faults on the backend emulators (bench/emulator/control.ts), which
 * global-setup.ts starts with their control endpoint on. A backend is a
 * BACKENDS id ("emu-1") or an emulator url (spareUrls()). The emulators are
 * shared by every test file: prefer a fault scoped by `match` to a marker only
 * your test sends, and always clear what you set (withBackendFault does).
 */
async function backendControl(
  backend: string,
  method: "GET" | "POST" | "DELETE",
  path: "fault" | "health" | "down",
  body?: unknown,
): Promise<ControlState> {
  const base = backend.startsWith("http") ? backend : backendUrl(backend);
  const res = await fetch(`${base}/_control/${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok)
    throw new Error(`backend ${backend}: ${method} /_control/${path} → ${res.status} ${await res.text()}`);
  return (await res.json()) as ControlState;
}

/** The backend's fault, /health override and counters (served, faulted by kind, abandoned, held, ...). */
export function backendState(backend: string): Promise<ControlState> {
  return backendControl(backend, "GET", "fault");
}

/** Sets the backend's fault (a bad spec throws with the emulator's 400 message). Prefer withBackendFault. */
export function setBackendFault(backend: string, spec: FaultSpec): Promise<ControlState> {
  return backendControl(backend, "POST", "fault", spec);
}

/** Clears the backend's fault: hung requests are then served, stalled streams closed. */
export function clearBackendFault(backend: string): Promise<ControlState> {
  return backendControl(backend, "DELETE", "fault");
}

/** Runs `fn` with the fault set on the backend, and clears it afterwards, also when `fn` throws. */
export async function withBackendFault<T>(
  backend: string,
  spec: FaultSpec,
  fn: () => Promise<T>,
): Promise<T> {
  await setBackendFault(backend, spec);
  try {
    return await fn();
  } finally {
    await clearBackendFault(backend);
  }
}

/** Runs `fn` while the backend's /health fails on its own (503 unless `status`), and restores it afterwards. */
export async function withBackendUnhealthy<T>(
  backend: string,
  fn: () => Promise<T>,
  override: HealthOverride = {},
): Promise<T> {
  await backendControl(backend, "POST", "health", override);
  try {
    return await fn();
  } finally {
    await backendControl(backend, "DELETE", "health");
  }
}

/** Kills the backend now (connections refused) and restarts it, fresh, on the same port after `ms` (1..60000). */
export function takeBackendDown(backend: string, ms: number): Promise<ControlState> {
  return backendControl(backend, "POST", "down", { ms });
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
