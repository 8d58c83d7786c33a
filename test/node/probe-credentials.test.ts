/**
 * The RouterDO's health probe (src/worker/health-probe.ts) and its
 * /metrics scrape (src/worker/engine-scrape/fetch-metrics.ts) treat a
 * backend the way requests do, against a real HTTP server on loopback
 * shaped like vLLM started with --api-key: /health and /metrics open, /v1
 * guarded by the key. They send the backend's key, never follow a
 * redirect, and a backend that refuses the key fails the probe (before,
 * its open /health restored it, and it was ejected again three requests
 * later: bench/results/red-team.md, third pass).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchEngineMetrics } from "../../src/worker/engine-scrape/fetch-metrics";
import { probeBackend } from "../../src/worker/health-probe";

const KEY = "the-engines-key";
const GAUGES = `vllm:num_requests_running{engine="0"} 1.0
vllm:num_requests_waiting{engine="0"} 0.0
vllm:kv_cache_usage_perc{engine="0"} 0.1
`;

let server: Server;
let base = "";
/** What each path was sent: its authorization header ("" when none). */
const seen: { path: string; authorization: string }[] = [];

const keyed = (req: IncomingMessage) => req.headers.authorization === `Bearer ${KEY}`;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? "/";
    seen.push({ path: url, authorization: req.headers.authorization ?? "" });
    const [, prefix = "", rest = ""] = /^\/([a-z-]+)(\/.*)$/.exec(url) ?? [];
    const send = (status: number, body = "", headers: Record<string, string> = {}) => {
      res.writeHead(status, headers);
      res.end(body);
    };
    // /vllm: open /health and /metrics, /v1 guarded by the key.
    // /proxy: everything guarded by the key (a proxy in front of the engine).
    // /moved: /health, /v1/models and /metrics answer 307 to /vllm's (the url is not the server's own).
    // /moved-models: /health fine, /v1/models a 307.
    // /nomodels: open /health, no /v1/models at all (404).
    // /down: /health 503.
    const guarded = prefix === "proxy" || rest.startsWith("/v1/");
    if (prefix === "moved" || (prefix === "moved-models" && rest === "/v1/models"))
      return send(307, "", { location: `${base}/vllm${rest}` });
    if (guarded && !keyed(req)) return send(401, '{"error":"Unauthorized"}');
    if (prefix === "down" && rest === "/health") return send(503);
    if (rest === "/health") return send(200);
    if (rest === "/metrics") return send(200, GAUGES, { "content-type": "text/plain; version=0.0.4" });
    if (rest === "/v1/models" && prefix !== "nomodels") return send(200, '{"object":"list","data":[]}');
    return send(404);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const probe = (prefix: string, apiKey?: string) =>
  probeBackend(`${base}/${prefix}`, {
    timeoutMs: 2000,
    checkCredentials: true,
    ...(apiKey !== undefined ? { apiKey } : {}),
  });

describe("health probe", () => {
  it("is healthy with the right key, which it sends on /health and /v1/models", async () => {
    seen.length = 0;
    expect(await probe("vllm", KEY)).toEqual({ healthy: true });
    expect(seen).toEqual([
      { path: "/vllm/health", authorization: `Bearer ${KEY}` },
      { path: "/vllm/v1/models", authorization: `Bearer ${KEY}` },
    ]);
  });

  it("fails a backend that refuses the key (wrong or missing), though its /health is open", async () => {
    expect(await probe("vllm", "a-wrong-key")).toEqual({
      healthy: false,
      reason: "/v1/models refused the gateway's credentials (401)",
    });
    expect(await probe("vllm")).toMatchObject({ healthy: false });
  });

  it("restores a backend behind a proxy that guards /health too, with its key; fails it without", async () => {
    expect(await probe("proxy", KEY)).toEqual({ healthy: true });
    expect(await probe("proxy")).toEqual({ healthy: false, reason: "/health answered 401" });
  });

  it("never follows a redirect: a 3xx on /health or /v1/models is a failed probe, the target never asked", async () => {
    seen.length = 0;
    expect(await probe("moved", KEY)).toEqual({ healthy: false, reason: "/health answered 307, a redirect" });
    expect(await probe("moved-models", KEY)).toEqual({
      healthy: false,
      reason: "/v1/models answered 307, a redirect",
    });
    expect(seen.map((s) => s.path)).toEqual([
      "/moved/health",
      "/moved-models/health",
      "/moved-models/v1/models",
    ]);
  });

  it("leaves the verdict to /health when /v1/models is not there (404), and fails a 503 /health", async () => {
    expect(await probe("nomodels", KEY)).toEqual({ healthy: true });
    expect(await probe("down", KEY)).toEqual({ healthy: false, reason: "/health answered 503" });
  });

  it("without checkCredentials (a backend the prober's BACKENDS does not list), /health alone decides", async () => {
    seen.length = 0;
    expect(await probeBackend(`${base}/vllm`, { timeoutMs: 2000 })).toEqual({ healthy: true });
    expect(seen).toEqual([{ path: "/vllm/health", authorization: "" }]);
  });
});

describe("engine /metrics scrape", () => {
  const scrape = (prefix: string, apiKey?: string) =>
    fetchEngineMetrics(`${base}/${prefix}/metrics`, {
      deadlineMs: 2000,
      maxBytes: 64 * 1024,
      ...(apiKey !== undefined ? { apiKey } : {}),
    });

  it("sends the backend's key, so a proxy that guards /metrics can be read", async () => {
    seen.length = 0;
    expect(await scrape("proxy", KEY)).toMatchObject({ ok: true, reading: { running: 1, waiting: 0 } });
    expect(seen).toEqual([{ path: "/proxy/metrics", authorization: `Bearer ${KEY}` }]);
    expect(await scrape("proxy")).toMatchObject({
      ok: false,
      reason: "HTTP 401, refused the gateway's credentials",
    });
  });

  it("never follows a redirect: a 3xx is a failed scrape, the target never asked", async () => {
    seen.length = 0;
    expect(await scrape("moved", KEY)).toMatchObject({
      ok: false,
      reason: "HTTP 307, a redirect (not followed)",
    });
    expect(seen.map((s) => s.path)).toEqual(["/moved/metrics"]);
  });
});
