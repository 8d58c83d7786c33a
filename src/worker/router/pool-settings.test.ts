import { describe, expect, it } from "vitest";
import { Router, SETTINGS } from "../../routing";
import { backendSpecs, healthSettings, routerOptions } from "./pool-settings";
import type { PoolSpec } from "./router-rpc";

const spec: PoolSpec = {
  backends: [
    { id: "a", url: "http://a.internal", weight: 1, kvCacheTokens: 65536 },
    { id: "b", url: "http://b.internal", weight: 3, kvCacheTokens: 131072 },
  ],
  policy: "prefix_aware",
  blockTokens: 32,
  balanceFactor: 1.5,
  leaseTtlSeconds: 600,
  healthProbeSeconds: 7,
  ejectAfterFaults: 4,
  restoreAfterChecks: 3,
  maxEjectionPercent: 25,
  retryBudgetPercent: 20,
  abPolicy: null,
  abPercent: 50,
  shadow: false,
  engineScrapeMs: 0,
  maxInflightPerBackend: 0,
  keyShareHeadroomPercent: 10,
  backendCheckSeconds: 0,
};

describe("pool settings → the routing core", () => {
  it("hands routing the backends without their urls", () => {
    expect(backendSpecs(spec)).toEqual([
      { id: "a", weight: 1, kvCacheTokens: 65536 },
      { id: "b", weight: 3, kvCacheTokens: 131072 },
    ]);
  });

  it("maps the pool's outlier-detection settings, probe interval in ms", () => {
    expect(healthSettings(spec)).toEqual({ fall: 4, rise: 3, maxEjectionPercent: 25, probeIntervalMs: 7000 });
  });

  it("builds a Router with the pool's policy, block size and balance factor, or another policy", () => {
    const router = new Router(backendSpecs(spec), routerOptions(spec));
    expect(router.stats()).toMatchObject({ policy: "prefix_aware", blockTokens: 32, balanceFactor: 1.5 });
    expect(new Router(backendSpecs(spec), routerOptions(spec, "consistent_hash")).policy.name).toBe(
      "consistent_hash",
    );
  });

  it("refuses settings outside the bounds the Worker's config enforces", () => {
    const tooCoarse = { ...spec, blockTokens: SETTINGS.BLOCK_TOKENS.max + 1 };
    expect(() => new Router(backendSpecs(tooCoarse), routerOptions(tooCoarse))).toThrow(/blockTokens/);
  });
});
