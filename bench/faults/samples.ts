/**
 * The gauges over time: every `everyMs`, the RouterDO's stats (leases,
 * backends' health and in-flight, usage counters, the affinity index's
 * bytes) through /healthz, and workerd's RSS and CPU from /proc. One sample
 * at a time (a slow /healthz delays the next, never piles up).
 */
import type { UsageTotals } from "../../src/worker/router/router-rpc";
import type { RunClock } from "./clients";
import type { PoolStats, Rig } from "./rig";

export interface BackendSample {
  readonly id: string;
  readonly healthy: boolean;
  readonly inflight: number;
  readonly faults: number;
  readonly throttled: boolean;
  readonly nextProbeAt?: number;
}

export interface Sample {
  /** ms since the run's start. */
  readonly tMs: number;
  /** Epoch ms (to read the RouterDO's epoch fields against). */
  readonly at: number;
  readonly rssBytes?: number;
  readonly cpuMs: number;
  /** Absent when /healthz did not give the pool's stats. */
  readonly leases?: number;
  readonly usage?: UsageTotals;
  readonly backends?: readonly BackendSample[];
  readonly indexBytes?: number;
  /** The affinity indexes' largest possible size (40 B × capacity entries; lru-block-set.ts). */
  readonly indexBoundBytes?: number;
}

/** A node record (32 B) and at most two 4-byte hash buckets per entry of an LruBlockSet. */
const INDEX_BYTES_PER_ENTRY_BOUND = 40;

export function indexBoundBytes(stats: PoolStats): number {
  let entries = 0;
  for (const b of stats.router.backends) entries += b.indexCapacityBlocks / stats.router.indexStride;
  return entries * INDEX_BYTES_PER_ENTRY_BOUND;
}

export function sampleOf(
  tMs: number,
  at: number,
  rss: number | undefined,
  cpuMs: number,
  s?: PoolStats,
): Sample {
  const base = { tMs, at, cpuMs, ...(rss !== undefined ? { rssBytes: rss } : {}) };
  if (s === undefined) return base;
  return {
    ...base,
    leases: s.leases,
    usage: s.usage,
    backends: s.backends.map((b) => ({
      id: b.id,
      healthy: b.healthy,
      inflight: b.inflight,
      faults: b.consecutiveFailures,
      throttled: b.throttledUntil !== undefined && b.throttledUntil > at,
      ...(b.nextProbeAt !== undefined ? { nextProbeAt: b.nextProbeAt } : {}),
    })),
    indexBytes: s.router.indexBytes,
    indexBoundBytes: indexBoundBytes(s),
  };
}

export async function takeSample(rig: Rig, clock: RunClock): Promise<Sample> {
  const stats = await rig.poolStats();
  return sampleOf(clock.now(), Date.now(), rig.rssBytes(), rig.cpuMs(), stats);
}

export interface Sampler {
  readonly samples: Sample[];
  stop(): Promise<void>;
}

export function startSampler(rig: Rig, clock: RunClock, everyMs: number): Sampler {
  const samples: Sample[] = [];
  let stopping = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopping) {
      const due = clock.now() + everyMs;
      samples.push(await takeSample(rig, clock));
      const wait = due - clock.now();
      if (wait > 0 && !stopping)
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, wait);
        });
    }
  })();
  return {
    samples,
    async stop() {
      stopping = true;
      wake?.();
      await loop;
    },
  };
}
