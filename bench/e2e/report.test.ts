import { describe, expect, it } from "vitest";
import { segmentRequest } from "../../sim/workloads/request";
import { armResult } from "./arm-result";
import type { ReplayRecord, ReplayRun } from "./replay";
import { addedLatency, type E2eReport, renderMarkdown, ttftVersusDirect } from "./report";
import type { E2eItem } from "./requests";
import type { RequestResult } from "./stream-client";

function run(results: RequestResult[]): ReplayRun<E2eItem> {
  const records: ReplayRecord<E2eItem>[] = results.map((result, index) => ({
    index,
    sentMs: index * 10 + 1,
    item: {
      atMs: index * 10,
      body: "{}",
      request: segmentRequest(index * 10, [{ key: "a", tokens: 32 }], 4),
    },
    result,
  }));
  return { records, wallMs: 1000, peakInflight: 3 };
}

const ok = (ttftMs: number, backend: string): RequestResult => ({
  outcome: "ok",
  status: 200,
  ttftMs,
  e2eMs: ttftMs + 50,
  contentChunks: 4,
  promptTokens: 40,
  completionTokens: 4,
  cachedTokens: 16,
  backend,
  route: "affinity",
});

describe("armResult", () => {
  it("counts every request as ok, error or lost and summarizes only successes", () => {
    const r = armResult(
      "prefix_aware",
      run([
        ok(10, "emu-1"),
        ok(20, "emu-2"),
        { outcome: "error", status: 503, e2eMs: 5, contentChunks: 0, errorType: "overloaded" },
        { outcome: "lost", status: 200, e2eMs: 9, contentChunks: 1, error: "stream ended before [DONE]" },
      ]),
      { queryTokens: 100, hitTokens: 25 },
      (rec) => rec.result.backend,
    );
    expect([r.sent, r.ok, r.errors, r.lost]).toEqual([4, 2, 1, 1]);
    expect(r.failures).toEqual({ "503:overloaded": 1, "200:lost": 1 });
    expect(r.ttftMs.count).toBe(2);
    expect(r.ttftMs.p50).toBe(10);
    expect(r.kv.hitRate).toBeCloseTo(0.25);
    expect(r.reportedHitRate).toBeCloseTo(0.4);
    expect(r.backendShare).toEqual({ "emu-1": 0.25, "emu-2": 0.25 });
    expect(r.sendLagMs.p50).toBe(1);
  });
});

describe("report", () => {
  it("subtracts the backend's own TTFT per request, then direct's, and states the command", () => {
    // Direct: 2 ms outside the backend on each request.
    const direct = armResult(
      "direct",
      run([ok(10, "emu-1"), ok(30, "emu-1")]),
      { queryTokens: 0, hitTokens: 0 },
      () => "emu-1",
      (rec) => [8, 28][rec.index],
    );
    // Through the gateway the second request queued much longer inside the backend (placement):
    // its TTFT is far worse, but only 3 ms were spent outside the backend.
    const lo = armResult(
      "least_outstanding",
      run([ok(13, "emu-1"), ok(90, "emu-2")]),
      { queryTokens: 0, hitTokens: 0 },
      (r) => r.result.backend,
      (rec) => [10, 87][rec.index],
    );
    expect(lo.outsideBackendMs.p50).toBe(3);
    expect(addedLatency([lo, direct])).toEqual([{ arm: "least_outstanding", p50: 1, p99: 1 }]);
    expect(ttftVersusDirect([lo, direct])).toEqual([{ arm: "least_outstanding", p50: 3, p99: 60 }]);
    const report: E2eReport = {
      name: "t",
      command: "npm run bench:e2e -- --workload x",
      startedAt: "now",
      machine: "m",
      config: {
        workload: "x",
        rate: 1,
        backends: 2,
        durationS: 1,
        speed: 1,
        seed: 1,
        model: "m",
        runtime: "workerd",
        requests: 2,
        promptTokensMean: 32,
        outputTokensMean: 4,
        maxTokens: { model: "clients", summary: "half send none", sentShare: 0.5, sentOverTrue: 64 },
        set: "tuning set (seed 1; tuning seeds 1–2)",
        engine: { kvCacheTokens: 1000 },
      },
      arms: [lo, direct],
      notes: [],
    };
    const md = renderMarkdown(report);
    expect(md).toContain("npm run bench:e2e -- --workload x");
    expect(md).toContain("None: every request sent in every arm completed.");
    expect(md).toContain("| least_outstanding | 3.0 | 3.0 | 3.0 | 1.0 | 1.0 | 2 |");
    expect(md).toContain("workerd alone");
    expect(md).toContain("model `clients`: half send none; sent on 50.0% of requests");
    expect(md).toContain("Set: tuning set (seed 1; tuning seeds 1–2).");
  });
});
