/**
 * Is it paying off? The operator's loop against the real gateway in workerd
 * with four emulators behind it (bench/e2e/operator-loop.ts): a 50/50 A/B
 * split of prefix_aware against least_outstanding with the shadow on, a
 * multi-turn chat workload, then what /admin/stats and /metrics say about
 * it, and the dashboard drawing it in headless Chromium.
 */
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chartsDrawn, launchChromium, openDashboard } from "../../bench/e2e/dashboard-browser";
import {
  adminGet,
  LOOP_MODEL,
  type OperatorRig,
  runConversations,
  settled,
  startOperatorRig,
} from "../../bench/e2e/operator-loop";
import type { PoolView } from "../../src/worker/stats/stats-view";

let rig: OperatorRig | undefined;

beforeAll(async () => {
  rig = await startOperatorRig();
}, 90_000);

afterAll(async () => {
  await rig?.close();
}, 30_000);

async function pool(): Promise<PoolView> {
  const res = await adminGet(rig!, "/admin/stats");
  expect(res.status).toBe(200);
  const body = (await res.json()) as { pools: Record<string, { ok: boolean } & PoolView> };
  const p = body.pools[LOOP_MODEL]!;
  expect(p.ok).toBe(true);
  return p;
}

describe("the operator's loop", () => {
  it("A/B 50/50: prefix_aware delivers more hits and no higher a TTFT p50; the shadow's expectation matches", async () => {
    const results = await runConversations(rig!.gateway, { conversations: 24, turns: 5, concurrency: 12 });
    expect(results.filter((r) => r.outcome !== "ok")).toEqual([]);
    await settled(rig!);
    const p = await pool();
    const [a, b] = p.arms as [PoolView["arms"][number], PoolView["arms"][number]];
    const figures = {
      arms: p.arms.map((x) => ({
        arm: x.arm,
        policy: x.policy,
        requests: x.requests,
        delivered: x.hitRate.delivered,
        expected: x.hitRate.expected,
        available: x.hitRate.available,
        ttftP50: x.ttftMs.p50,
        ttftP99: x.ttftMs.p99,
      })),
      shadow: p.shadow?.expectedHitRate,
    };
    console.log(JSON.stringify(figures));
    expect([a.policy, b.policy]).toEqual(["prefix_aware", "least_outstanding"]);
    // Conversations, not requests, are split: each arm gets a fair share of the 24 (5 turns each).
    expect(a.requests).toBeGreaterThanOrEqual(6 * 5);
    expect(b.requests).toBeGreaterThanOrEqual(6 * 5);
    expect(a.requests + b.requests).toBe(24 * 5);
    expect(a.hitRate.delivered!).toBeGreaterThan(b.hitRate.delivered! + 0.05);
    // Not strictly lower: least_outstanding places a turn at random among the backends tied for least in flight,
    // so by chance a conversation's turns can land where its history is; once more than half of its requests
    // hit, its p50 is a hit's and falls in the same sketch bucket as ours (seen once in a full suite run: both
    // 40.05 ms, least_outstanding delivering 60% of prompt tokens from cache against our 78%; alone it is
    // ~140 ms against ~35). The hit gap above is the claim that does not depend on luck or timing.
    expect(a.ttftMs.p50!).toBeLessThanOrEqual(b.ttftMs.p50!);
    expect(Math.abs(p.shadow!.expectedHitRate! - a.hitRate.delivered!)).toBeLessThan(0.1);
    // Where the hits went: available ≥ captured per arm, and least_outstanding leaves reuse on the table.
    expect(b.hits.available).toBeGreaterThanOrEqual(b.hits.captured);
    expect(b.hitRate.available! - b.hitRate.captured!).toBeGreaterThan(0.05);
    expect(a.errors + b.errors).toBe(0);
    expect(Object.values(b.backends).length).toBe(4);
  }, 120_000);

  it("/metrics parses as Prometheus text and agrees with /admin/stats", async () => {
    const res = await adminGet(rig!, "/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const families = parsePrometheusTextFormat(await res.text());
    const byName = new Map(families.map((f) => [f.name, f]));
    for (const name of [
      "prefix_gateway_backend_up",
      "prefix_gateway_backend_inflight_requests",
      "prefix_gateway_routed_requests_total",
      "prefix_gateway_reuse_available_tokens_total",
      "prefix_gateway_reuse_captured_tokens_total",
      "prefix_gateway_reuse_delivered_tokens_total",
      "prefix_gateway_ttft_seconds",
      "prefix_gateway_retries_total",
      "prefix_gateway_ejections_total",
      "prefix_gateway_shadow_reuse_captured_tokens_total",
    ])
      expect(byName.has(name), name).toBe(true);
    const p = await pool();
    const routed = byName.get("prefix_gateway_routed_requests_total")!.metrics;
    const sum = (arm: string) =>
      routed.filter((m) => m.labels?.arm === arm).reduce((s, m) => s + Number(m.value), 0);
    expect(sum("a")).toBe(p.arms[0]!.requests);
    expect(sum("b")).toBe(p.arms[1]!.requests);
    expect(byName.get("prefix_gateway_backend_up")!.metrics.map((m) => m.value)).toEqual([
      "1",
      "1",
      "1",
      "1",
    ]);
    expect((await fetch(`${rig!.gateway.url}/metrics`)).status).toBe(401);
  }, 30_000);

  it("the dashboard draws live data in headless Chromium", async () => {
    const browser = await launchChromium();
    const stop = new AbortController();
    const traffic = runConversations(rig!.gateway, {
      conversations: 1000,
      turns: 4,
      concurrency: 3,
      tag: "live-",
      signal: stop.signal,
    });
    try {
      const page = await openDashboard(browser, rig!.gateway.url, rig!.adminToken, { pollMs: 300 });
      const drawn = await chartsDrawn(page, { polls: 5, timeoutMs: 30_000 });
      console.log(JSON.stringify(drawn));
      for (const chart of ["inflight", "hits", "ttft", "reasons"]) {
        expect(drawn.charts[chart]!.points, chart).toBeGreaterThan(0);
        expect(drawn.charts[chart]!.inkPixels, chart).toBeGreaterThan(50);
      }
      expect(drawn.charts.ttft!.series).toEqual(
        expect.arrayContaining(["a (prefix_aware) p50", "b (least_outstanding) p99"]),
      );
      // The token never reaches a URL: not the page's, not a request's.
      expect(drawn.urls.some((u) => u.includes(rig!.adminToken))).toBe(false);
      // The backend table shows each backend's /v1/models check (BACKEND_CHECK_SECONDS, on by default): all ok.
      const rows = await page.page.evaluate(() =>
        Array.from(document.querySelectorAll("#backends tr")).map((r) =>
          Array.from(r.children).map((c) => c.textContent ?? ""),
        ),
      );
      expect(rows[0]).toContain("/v1/models check");
      expect(rows.slice(1).map((r) => r.at(-1))).toEqual(["ok", "ok", "ok", "ok"]);
    } finally {
      stop.abort();
      await traffic;
      await browser.close();
    }
  }, 90_000);
});
