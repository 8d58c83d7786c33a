/**
 * CORS_ALLOW_ORIGINS in a real browser: headless Chromium on two pages of
 * different origins (two loopback ports) calls the gateway (workerd, the
 * frozen bundle, an emulator behind it) the way a page with the openai SDK
 * does: a key, a JSON body, the SDK's x-stainless-* headers, so a preflight.
 * The listed page reads the stream, the gateway's headers and a 401; the
 * unlisted one is refused by the browser itself. The workerd tests check
 * the headers; this checks that a browser agrees they are enough.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, launchChromium } from "../../bench/e2e/dashboard-browser";
import { bundleWorker, type Gateway, startGateway, type WorkerBundle } from "../../bench/e2e/gateway";
import { startEmulator } from "../../bench/emulator/server";

const MODEL = "cors-model";
const GW_KEY = "cors-browser-gateway-key";

let emulator: Awaited<ReturnType<typeof startEmulator>> | undefined;
let bundle: WorkerBundle | undefined;
let gateway: Gateway | undefined;
let listed: Server | undefined;
let unlisted: Server | undefined;
let browser: Browser | undefined;

/** A page server: an empty HTML page at /, so that the page's origin is http://127.0.0.1:<its port>. */
async function pageServer(): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>page</title>");
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return server;
}
const originOf = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, host: "127.0.0.1", model: MODEL, apiKey: "emu", speed: 50 });
  listed = await pageServer();
  unlisted = await pageServer();
  bundle = await bundleWorker();
  gateway = await startGateway({
    configPath: bundle.configPath,
    backends: [
      { id: "emu", url: emulator.url, models: [MODEL], apiKey: "emu", weight: 1, kvCacheTokens: 262_144 },
    ],
    policy: "prefix_aware",
    apiKey: GW_KEY,
    vars: { CORS_ALLOW_ORIGINS: originOf(listed) },
    readyTimeoutMs: 45_000,
  });
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  await Promise.allSettled([emulator?.close(), bundle?.dispose()]);
  for (const s of [listed, unlisted]) s?.close();
}, 30_000);

interface PageResult {
  ok: boolean;
  status?: number;
  backend?: string | null;
  requestId?: string | null;
  text?: string;
  error?: string;
}

/** Runs, in a page of `origin`, a streamed chat call with the SDK's headers and `key`; what the page could read. */
async function callFrom(origin: string, key: string): Promise<PageResult> {
  const page = await browser!.context.newPage();
  try {
    await page.goto(`${origin}/`);
    return await page.evaluate(
      async ({ url, key, model }) => {
        try {
          const res = await fetch(`${url}/v1/chat/completions`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${key}`,
              "content-type": "application/json",
              "x-stainless-lang": "js",
              "x-stainless-retry-count": "0",
              "x-stainless-runtime": "browser:chrome",
            },
            body: JSON.stringify({
              model,
              stream: true,
              max_tokens: 8,
              messages: [{ role: "user", content: "hello from a browser page" }],
            }),
          });
          return {
            ok: true,
            status: res.status,
            backend: res.headers.get("x-prefix-gateway-backend"),
            requestId: res.headers.get("x-request-id"),
            text: await res.text(),
          };
        } catch (err) {
          return { ok: false, error: String(err) };
        }
      },
      { url: gateway!.url, key, model: MODEL },
    );
  } finally {
    await page.close();
  }
}

describe("CORS in Chromium", () => {
  it("a listed origin's page reads a stream and the gateway's headers", async () => {
    const r = await callFrom(originOf(listed!), GW_KEY);
    expect(r).toMatchObject({ ok: true, status: 200, backend: "emu" });
    expect(r.requestId).toBeTruthy();
    expect(r.text).toContain("data: [DONE]");
  }, 30_000);

  it("a listed origin's page reads the gateway's 401", async () => {
    const r = await callFrom(originOf(listed!), "not-a-key");
    expect(r).toMatchObject({ ok: true, status: 401 });
    expect(r.text).toContain("invalid_api_key");
  }, 30_000);

  it("an unlisted origin's page is refused by the browser", async () => {
    const r = await callFrom(originOf(unlisted!), GW_KEY);
    expect(r.ok).toBe(false);
    expect(r.error).toContain("Failed to fetch");
  }, 30_000);
});
