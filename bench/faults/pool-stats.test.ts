import { describe, expect, it } from "vitest";
import type { UsageTotals } from "../../src/worker/router/router-rpc";
import { cellMembers, type PoolStats, poolStatsOf } from "./pool-stats";

const usage = (n: number): UsageTotals => ({
  completed: n,
  failed: 0,
  expired: 0,
  withUsage: n,
  promptTokens: 100 * n,
  cachedTokens: 50 * n,
  outputTokens: 10 * n,
  retried: 1,
  retriesRefused: 0,
  ejections: n > 5 ? 1 : 0,
  restorations: 0,
  observed: 0,
  shed: 0,
});

function cell(ids: readonly string[], leases: number, n: number, indexBytes: number): PoolStats {
  return {
    ok: true,
    instanceStartedAt: 1,
    countingSince: 1,
    fleetVersion: "v",
    policy: "prefix_aware",
    leases,
    firstTokens: 0,
    backends: ids.map((id) => ({ id, healthy: id !== "emu-2", inflight: leases, consecutiveFailures: 0 })),
    usage: usage(n),
    router: {
      policy: "prefix_aware",
      blockTokens: 16,
      balanceFactor: 1,
      indexStride: 4,
      totalInflight: leases,
      backends: [],
      indexBytes,
      indexBlocks: 0,
      correctedBlocks: 0,
      forgottenBlocks: 0,
    },
  };
}

const ORDER = ["emu-1", "emu-2", "emu-3", "emu-4"];

describe("poolStatsOf: the pool's gauges from /healthz, one RouterDO or cells", () => {
  it("takes one RouterDO's stats as they are", () => {
    const one = cell(ORDER, 3, 7, 100);
    expect(poolStatsOf(one, ORDER)).toBe(one);
  });

  it("sums the cells' leases, counters and index bytes, and lists every backend in BACKENDS order", () => {
    const got = poolStatsOf(
      {
        ok: true,
        cells: { "m#0": cell(["emu-1", "emu-3"], 2, 4, 100), "m#1": cell(["emu-4", "emu-2"], 5, 6, 300) },
      },
      ORDER,
    );
    expect(got?.leases).toBe(7);
    expect(got?.backends.map((b) => b.id)).toEqual(ORDER);
    expect(got?.backends.find((b) => b.id === "emu-2")?.healthy).toBe(false);
    expect(got?.usage.completed).toBe(10);
    expect(got?.usage.retried).toBe(2);
    expect(got?.usage.ejections).toBe(1);
    expect(got?.router.indexBytes).toBe(400);
    expect(got?.router.totalInflight).toBe(7);
  });

  it("counts a cell no request reached yet (no_fleet) as empty, and gives nothing when a cell is unreadable", () => {
    const noFleet = { ok: false, code: "no_fleet", message: "no request yet" };
    const got = poolStatsOf(
      { ok: true, cells: { a: cell(["emu-1", "emu-3"], 2, 4, 100), b: noFleet } },
      ORDER,
    );
    expect(got?.leases).toBe(2);
    expect(got?.backends.map((b) => b.id)).toEqual(["emu-1", "emu-3"]);
    expect(poolStatsOf({ ok: true, cells: { a: noFleet, b: noFleet } }, ORDER)).toBeUndefined();
    const down = { ok: false, code: "router_unavailable", message: "gone" };
    expect(poolStatsOf({ ok: true, cells: { a: cell(["emu-1"], 0, 1, 1), b: down } }, ORDER)).toBeUndefined();
    expect(poolStatsOf(undefined, ORDER)).toBeUndefined();
  });

  it("names each cell's backends, or why it has none", () => {
    expect(
      cellMembers({
        ok: true,
        cells: { a: cell(["emu-1", "emu-3"], 0, 0, 0), b: { ok: false, code: "no_fleet", message: "" } },
      }),
    ).toEqual(["emu-1 emu-3", "(no_fleet)"]);
  });
});
