import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { describe, expect, it } from "vitest";
import { METRICS_CONTENT_TYPE, metricsText } from "./metrics-text";
import type { PoolSnapshot } from "./pool-snapshot";
import { PoolStats } from "./pool-stats";
import { mergeSnapshots } from "./snapshot-merge";
import { poolView } from "./stats-view";

/** A pool's snapshot after a few requests through both arms and the shadow. */
function snapshot(backend: (i: number) => string, n = 20): PoolSnapshot {
  const stats = new PoolStats(["prefix_aware", "least_outstanding"], "prefix_aware");
  for (let i = 0; i < n; i++) {
    const arm = i % 2;
    const id = backend(i);
    const decision = {
      backendId: id,
      reason: i % 5 === 0 ? ("ring" as const) : ("affinity" as const),
      expectedCachedTokens: arm === 0 ? 800 : 300,
      availableCachedTokens: 900,
      inflightAtDecision: 0,
    };
    const shadow = { backendId: i % 3 === 0 ? id : "other", expectedCachedTokens: 850 };
    const figures = stats.routed({ arm: arm as 0 | 1, decision, shadow }, 1000);
    stats.ended(arm, figures, {
      ok: i !== 7,
      ...(i === 7 ? { failure: "stream_error" as const } : {}),
      promptTokens: 1010,
      cachedTokens: arm === 0 ? 790 : 320,
      ttftMs: arm === 0 ? 20 + i : 120 + i,
      durationMs: 400 + i,
      outputTokens: 50,
    });
  }
  return {
    fleetVersion: "v1",
    at: 1_700_000_000_000,
    backends: [
      {
        id: backend(0),
        healthy: true,
        drained: false,
        throttled: false,
        inflight: 2,
        consecutiveFailures: 0,
      },
      {
        id: backend(1),
        healthy: false,
        drained: true,
        throttled: false,
        inflight: 0,
        consecutiveFailures: 3,
      },
    ],
    counters: { retried: 1, retriesRefused: 0, ejections: 1, restorations: 0, expired: 0, observed: 0 },
    ...stats.snapshot(),
  };
}

describe("metricsText", () => {
  const text = metricsText(new Map([['model "x"\\1', snapshot((i) => `gpu-${i % 2}`)]]));
  const families = parsePrometheusTextFormat(text);

  it("parses as the Prometheus text format, every family with HELP and TYPE", () => {
    expect(METRICS_CONTENT_TYPE).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(families.length).toBeGreaterThan(15);
    for (const f of families) {
      expect(f.name).toMatch(/^prefix_gateway_[a-z_]+$/);
      expect(f.help.length).toBeGreaterThan(10);
      if (f.type === "COUNTER") expect(f.name).toMatch(/_total$/);
      if (f.type === "HISTOGRAM") expect(f.name).toMatch(/_seconds$/);
    }
    // Each family's HELP and TYPE come once, before its samples; every sample line is `name{labels} value`.
    const lines = text.trimEnd().split("\n");
    const seen = new Set<string>();
    for (const line of lines) {
      const meta = /^# (HELP|TYPE) (\S+) /.exec(line);
      if (meta !== null) {
        expect(seen.has(`${meta[1]} ${meta[2]}`)).toBe(false);
        seen.add(`${meta[1]} ${meta[2]}`);
        continue;
      }
      expect(line).toMatch(
        /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})? \S+$/,
      );
      const family = line.replace(/(_bucket|_sum|_count)?[{ ].*$/, "");
      expect(seen.has(`TYPE ${family}`) || seen.has(`TYPE ${line.split(/[{ ]/)[0]}`)).toBe(true);
    }
  });

  it("escapes label values and reports the figures", () => {
    const routed = families.find((f) => f.name === "prefix_gateway_routed_requests_total")!;
    expect(routed.metrics[0]!.labels!.model).toBe('model "x"\\1');
    const byReason = Object.fromEntries(
      routed.metrics.filter((m) => m.labels!.arm === "a").map((m) => [m.labels!.reason, Number(m.value)]),
    );
    expect(byReason).toEqual({ ring: 2, affinity: 8 });
    const delivered = families.find((f) => f.name === "prefix_gateway_reuse_delivered_tokens_total")!;
    expect(delivered.metrics.map((m) => Number(m.value))).toEqual([790 * 10, 320 * 9]);
    const up = families.find((f) => f.name === "prefix_gateway_backend_up")!;
    expect(up.metrics.map((m) => m.value)).toEqual(["1", "0"]);
  });

  it("reports each checked backend's /v1/models check as a gauge, and nothing for one not checked", () => {
    const base = snapshot((i) => `gpu-${i % 2}`);
    const checked: PoolSnapshot = {
      ...base,
      backends: [
        { ...base.backends[0]!, check: { state: "model_not_listed", status: 200, at: 1 } },
        { ...base.backends[1]!, check: { state: "ok", status: 200, at: 1 } },
        { ...base.backends[1]!, id: "gpu-new" },
      ],
    };
    const fams = parsePrometheusTextFormat(metricsText(new Map([["m", checked]])));
    const check = fams.find((f) => f.name === "prefix_gateway_backend_check_ok")!;
    expect(check.metrics.map((m) => [m.labels!.backend, m.value])).toEqual([
      ["gpu-0", "0"],
      ["gpu-1", "1"],
    ]);
  });

  it("reports each backend's relapses, and the next probe of one held out", () => {
    const base = snapshot((i) => `gpu-${i % 2}`);
    const held: PoolSnapshot = {
      ...base,
      backends: [base.backends[0]!, { ...base.backends[1]!, relapses: 3, nextProbeAt: 1_700_000_123_500 }],
    };
    const fams = parsePrometheusTextFormat(metricsText(new Map([["m", held]])));
    const relapses = fams.find((f) => f.name === "prefix_gateway_backend_relapses")!;
    expect(relapses.type).toBe("GAUGE");
    expect(relapses.metrics.map((m) => [m.labels!.backend, m.value])).toEqual([
      ["gpu-0", "0"],
      ["gpu-1", "3"],
    ]);
    const probe = fams.find((f) => f.name === "prefix_gateway_backend_next_probe_timestamp_seconds")!;
    expect(probe.metrics.map((m) => [m.labels!.backend, Number(m.value)])).toEqual([
      ["gpu-1", 1_700_000_123.5],
    ]);
  });

  it("reports each backend's probation: the good requests it still owes, 0 when none", () => {
    const base = snapshot((i) => `gpu-${i % 2}`);
    const back: PoolSnapshot = {
      ...base,
      backends: [base.backends[0]!, { ...base.backends[1]!, relapses: 2, probation: 2 }],
    };
    const fams = parsePrometheusTextFormat(metricsText(new Map([["m", back]])));
    const probation = fams.find((f) => f.name === "prefix_gateway_backend_probation_requests")!;
    expect(probation.type).toBe("GAUGE");
    expect(probation.metrics.map((m) => [m.labels!.backend, m.value])).toEqual([
      ["gpu-0", "0"],
      ["gpu-1", "2"],
    ]);
  });

  it("writes cumulative histogram buckets ending in +Inf = count", () => {
    const ttft = families.find((f) => f.name === "prefix_gateway_ttft_seconds")!;
    expect(ttft.type).toBe("HISTOGRAM");
    // The library keeps a histogram's buckets but not its labels: read arm a's lines directly.
    const plain = metricsText(new Map([["m", snapshot((i) => `gpu-${i % 2}`)]]));
    const value = (suffix: string, le?: string) => {
      const labels = `model="m",arm="a",policy="prefix_aware"${le === undefined ? "" : `,le="${le}"`}`;
      const line = plain
        .split("\n")
        .find((l) => l.startsWith(`prefix_gateway_ttft_seconds${suffix}{${labels}} `));
      return Number(line?.split(" ")[1]);
    };
    const les = [
      "0.005",
      "0.01",
      "0.025",
      "0.05",
      "0.1",
      "0.25",
      "0.5",
      "1",
      "2.5",
      "5",
      "10",
      "30",
      "60",
      "+Inf",
    ];
    const counts = les.map((le) => value("_bucket", le));
    for (let i = 1; i < counts.length; i++) expect(counts[i]!).toBeGreaterThanOrEqual(counts[i - 1]!);
    expect(value("_count")).toBe(10);
    expect(counts.at(-1)).toBe(10);
    // Arm a's TTFTs are 20..38 ms: all by the 0.05 s bucket, none by 0.01.
    expect(counts[1]).toBe(0);
    expect(counts[3]).toBe(10);
    expect(value("_sum")).toBeCloseTo(0.29, 5);
  });
});

describe("mergeSnapshots and poolView", () => {
  it("merges two cells' snapshots: counters add, backends concatenate, quantiles cover both", () => {
    const one = snapshot((i) => `c1-${i % 2}`);
    const two = snapshot((i) => `c2-${i % 2}`, 40);
    const merged = mergeSnapshots(one, two);
    expect(merged.backends.map((b) => b.id)).toEqual(["c1-0", "c1-1", "c2-0", "c2-1"]);
    expect(merged.arms[0]!.routed).toBe(one.arms[0]!.routed + two.arms[0]!.routed);
    expect(merged.arms[0]!.ttftMs.count).toBe(30);
    expect(merged.counters.ejections).toBe(2);
    expect(mergeSnapshots(two, one).arms[0]!.hits).toEqual(merged.arms[0]!.hits);
    const view = poolView(merged);
    expect(view.arms[0]!.ttftMs.p99).toBeGreaterThan(55);
    expect(view.arms[0]!.hitRate.delivered).toBeCloseTo(790 / 1010, 5);
    expect(view.arms[1]!.hitRate.expected).toBeCloseTo(0.3, 5);
    expect(view.hitRate.available).toBeCloseTo(0.9, 5);
    expect(view.shadow!.expectedHitRate).toBeCloseTo(0.85, 5);
    expect(view.arms[0]!.outputTokensPerSecond).toBeGreaterThan(100);
  });
});
