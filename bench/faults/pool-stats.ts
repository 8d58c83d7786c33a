/**
 * The pool's stats as the fault bench reads them from `/healthz`: one
 * RouterDO's stats when the pool is one cell, or (ROUTER_CELLS > 1) each
 * cell's by RouterDO name, merged here into one view of the pool, so the
 * gauges (leases, each backend's health and in-flight, usage counters, the
 * affinity index's bytes) mean the same with cells as without. Cells split
 * the backends, so their rows are disjoint; counters and gauges add up. A
 * cell no request has reached yet has no fleet (`no_fleet`): it holds no
 * leases and has counted nothing, so it adds nothing — as one RouterDO before
 * its first request gives no stats at all.
 */
import type { StatsResult, UsageTotals } from "../../src/worker/router/router-rpc";

/** The RouterDO's view of the pool (the `ok` branch of its stats). */
export type PoolStats = Extract<StatsResult, { ok: true }>;

/** What /healthz gives for one pool (src/worker/healthz.ts PoolHealth), as read off the wire. */
type PoolHealth = { ok: boolean; cells?: Record<string, unknown> } | undefined;

function sumUsage(all: readonly UsageTotals[]): UsageTotals {
  const out: Record<string, number> = {};
  for (const u of all) for (const [k, v] of Object.entries(u)) out[k] = (out[k] ?? 0) + v;
  return out as unknown as UsageTotals;
}

/**
 * One view of the pool from its /healthz entry, backends in `order` (the
 * BACKENDS secret's order, which the soak's series reads by position);
 * undefined when no cell has a fleet yet, or any cell could not be read (a
 * view without a reachable cell would read as a pool with fewer leases or
 * backends than it has).
 */
export function poolStatsOf(health: PoolHealth, order: readonly string[]): PoolStats | undefined {
  if (health?.ok !== true) return undefined;
  if (health.cells === undefined) return health as unknown as PoolStats;
  const cells = Object.values(health.cells) as { ok?: boolean; code?: string }[];
  if (cells.some((c) => c?.ok !== true && c?.code !== "no_fleet")) return undefined;
  const ok = cells.filter((c) => c.ok === true) as unknown as PoolStats[];
  if (ok.length === 0) return undefined;
  const rank = (id: string) => {
    const i = order.indexOf(id);
    return i < 0 ? order.length : i;
  };
  const first = ok[0]!;
  const total = (of: (c: PoolStats) => number) => ok.reduce((n, c) => n + of(c), 0);
  return {
    ...first,
    leases: total((c) => c.leases),
    backends: ok.flatMap((c) => c.backends).sort((a, b) => rank(a.id) - rank(b.id)),
    usage: sumUsage(ok.map((c) => c.usage)),
    router: {
      ...first.router,
      totalInflight: total((c) => c.router.totalInflight),
      backends: ok.flatMap((c) => c.router.backends),
      indexBytes: total((c) => c.router.indexBytes),
      indexBlocks: total((c) => c.router.indexBlocks),
      correctedBlocks: total((c) => c.router.correctedBlocks),
      forgottenBlocks: total((c) => c.router.forgottenBlocks),
    },
  };
}

/** Each cell's backend ids, or its error code (no_fleet: no request reached it yet), for the logs. */
export function cellMembers(health: PoolHealth): string[] | undefined {
  if (health?.ok !== true) return undefined;
  const cells = health.cells === undefined ? [health] : Object.values(health.cells);
  return (cells as StatsResult[]).map((c) =>
    c?.ok === true ? c.backends.map((b) => b.id).join(" ") : `(${(c as { code?: string })?.code ?? "?"})`,
  );
}
