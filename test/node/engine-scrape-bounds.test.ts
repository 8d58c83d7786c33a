/**
 * The scrape's bounds against a real HTTP server on loopback
 * (src/worker/engine-scrape/fetch-metrics.ts): a /metrics that answers
 * slowly, stalls mid-body or never stops is cut at the deadline or at the
 * byte cap, and reading stops as soon as the gauges are in.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchEngineMetrics } from "../../src/worker/engine-scrape/fetch-metrics";

const GAUGES = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m",engine="0"} 4.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="m",engine="0"} 2.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{model_name="m",engine="0"} 0.5
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{model_name="m",engine="0"} 100.0
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{model_name="m",engine="0"} 40.0
`;
/** 1 KiB of a histogram line, again and again. */
const FILLER = `vllm:request_prompt_tokens_bucket{model_name="m",engine="0",le="${"9".repeat(960)}"} 1.0\n`;

let server: Server;
let base = "";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let bodyBytesSent = 0;

/** Writes `n` filler lines without waiting for the client; stops when it goes away. */
async function fill(res: ServerResponse, n: number): Promise<void> {
  for (let i = 0; i < n && !res.destroyed; i++) {
    if (!res.write(FILLER)) await new Promise((r) => res.once("drain", r));
    bodyBytesSent += FILLER.length;
  }
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    res.on("error", () => {});
    const ok = () => res.writeHead(200, { "content-type": "text/plain; version=0.0.4" });
    switch (req.url) {
      case "/fine/metrics":
        ok();
        res.end(GAUGES);
        return;
      case "/slow-headers/metrics":
        await sleep(2000);
        ok();
        res.end(GAUGES);
        return;
      case "/stall/metrics":
        ok();
        res.write(GAUGES.slice(0, 80));
        await sleep(2000);
        res.end(GAUGES.slice(80));
        return;
      case "/huge-before/metrics":
        // 8 MiB of histograms before the gauges: the cap stops the read long before them.
        ok();
        await fill(res, 8192);
        res.end(GAUGES);
        return;
      case "/huge-after/metrics":
        // The gauges first, then 64 MiB: the read stops at the first line past the wanted families.
        bodyBytesSent = 0;
        ok();
        res.write(GAUGES);
        await fill(res, 65_536);
        res.end();
        return;
      case "/html/metrics":
        ok();
        res.end("<html>login</html>");
        return;
      default:
        res.writeHead(404).end("not found");
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const opts = { deadlineMs: 300, maxBytes: 64 * 1024 };

describe("fetchEngineMetrics", () => {
  it("reads a well-formed /metrics and says when its headers came", async () => {
    let headersAt = 0;
    const r = await fetchEngineMetrics(`${base}/fine/metrics`, {
      ...opts,
      onHeaders: () => {
        headersAt = Date.now();
      },
    });
    expect(r).toMatchObject({
      ok: true,
      reading: {
        engine: "vllm",
        running: 4,
        waiting: 2,
        kvUsage: 0.5,
        prefixQueryTokens: 100,
        prefixHitTokens: 40,
      },
    });
    expect(headersAt).toBeGreaterThan(0);
  });

  it("gives up on headers that do not come within the deadline", async () => {
    const t0 = performance.now();
    const r = await fetchEngineMetrics(`${base}/slow-headers/metrics`, opts);
    expect(r).toMatchObject({ ok: false, reason: "timeout (connect)" });
    expect(performance.now() - t0).toBeLessThan(1500);
  });

  it("gives up on a body that stalls mid-way, at the same deadline", async () => {
    const t0 = performance.now();
    const r = await fetchEngineMetrics(`${base}/stall/metrics`, opts);
    expect(r).toMatchObject({ ok: false, reason: "timeout (body)" });
    expect(performance.now() - t0).toBeLessThan(1500);
  });

  it("reads no more than the byte cap of a huge body, and says the gauges were not in it", async () => {
    const r = await fetchEngineMetrics(`${base}/huge-before/metrics`, {
      deadlineMs: 5000,
      maxBytes: 64 * 1024,
    });
    expect(r.ok).toBe(false);
    expect(r.bytes).toBe(64 * 1024);
    expect(!r.ok && r.reason).toBe("no vLLM or SGLang metric found in the first 65536 bytes");
  });

  it("stops reading as soon as the gauges are in, however long the rest", async () => {
    const r = await fetchEngineMetrics(`${base}/huge-after/metrics`, { deadlineMs: 5000, maxBytes: 1 << 30 });
    expect(r.ok).toBe(true);
    expect(r.bytes).toBeLessThan(128 * 1024);
    await sleep(100);
    // The server stopped writing when the client cancelled: far short of its 64 MiB.
    expect(bodyBytesSent).toBeLessThan(16 * 1024 * 1024);
  });

  it("fails with a reason, never throws: 404, not metrics, nobody listening", async () => {
    expect(await fetchEngineMetrics(`${base}/missing/metrics`, opts)).toMatchObject({
      ok: false,
      reason: "HTTP 404",
    });
    expect(await fetchEngineMetrics(`${base}/html/metrics`, opts)).toMatchObject({
      ok: false,
      reason: "no vLLM or SGLang metric found",
    });
    const refused = await fetchEngineMetrics("http://127.0.0.1:9/metrics", opts);
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.reason).toMatch(/^connect failed/);
  });
});
