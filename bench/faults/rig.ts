/**
 * The system under fault: backend emulators in this process (so a run can
 * stop, restart and fault each one through its handle) — or, for a run that
 * only needs their addresses (the fuzz pass), on a thread of their own, so
 * a backend busy with one request never stalls the driver that judges every
 * answer (startIsolatedRig) — behind the real
 * gateway bundle served by workerd (e2e/gateway.ts), and the gauges the
 * fault bench reads: the RouterDO's stats through `GET /healthz` with the
 * admin token, and the workerd process's memory and CPU from /proc.
 *
 * The RouterDO's storage lives in a directory the rig owns, so
 * `restartGateway` (a changed BACKENDS secret is a new deploy) finds the
 * pool's persisted fleet and health, as production would.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_ENGINE_CONFIG } from "../../sim/model/presets";
import type { BackendStatus } from "../../src/worker/router/router-rpc";
import { type BackendEntry, type Gateway, startGateway } from "../e2e/gateway";
import { groupCpuByCommand } from "../e2e/proc-cpu";
import { type EmulatorFleet, startEmulatorFleet, startEmulatorsHere } from "../emulator/fleet";
import type { Emulator, EmulatorOptions } from "../emulator/server";
import { cellMembers, type PoolStats, poolStatsOf } from "./pool-stats";

export const MODEL = "llama-3.1-8b-instruct";
export const GATEWAY_KEY = "faults-gateway-key";
export const ADMIN_TOKEN = "faults-admin-token-0123456789";
export const EMULATOR_KEY = "faults-emulator-key";

export type { PoolStats } from "./pool-stats";

export interface RigOptions {
  /** Emulators to start (ports picked by the OS, kept across stop/start). */
  readonly emulators: number;
  /** wrangler config serving the frozen bundle (gateway.ts bundleWorker). */
  readonly configPath: string;
  /** Gateway vars besides the policy (deadlines, probe interval...). */
  readonly vars?: Readonly<Record<string, string>>;
  /** The BACKENDS secret from the emulators' urls; default: one `emu-<i>` entry per emulator. */
  readonly entries?: (urls: readonly string[]) => BackendEntry[];
  /** The GATEWAY_API_KEYS secret (keys and their `max_concurrent` options); default: GATEWAY_KEY alone. */
  readonly gatewayKeys?: string;
  /** ROUTER_CELLS: RouterDO cells the pool is split into (default: the gateway's own default). */
  readonly cells?: number;
}

/** A rig whose backends are `E`: handles in this process (Rig), or a fleet on a thread (IsolatedRig). */
export interface RigOf<E> {
  readonly emulators: E;
  /** Backend ids of the current BACKENDS secret, in order. */
  readonly ids: readonly string[];
  readonly gateway: Gateway;
  /** Base url of the gateway (changes with restartGateway). */
  readonly url: string;
  /** The pool's RouterDO stats via /healthz; undefined before its first request or when unreadable. */
  poolStats(): Promise<PoolStats | undefined>;
  /** Each cell's backend ids, space-separated (one entry with one RouterDO); undefined when unreadable. */
  cellMembers(): Promise<string[] | undefined>;
  /** One backend's row of poolStats(). */
  backendStats(id: string): Promise<BackendStatus | undefined>;
  /** workerd's resident set, bytes (the Worker and the RouterDO share the process). */
  rssBytes(): number | undefined;
  /** workerd's CPU time so far, ms (user + system). */
  cpuMs(): number;
  /** Stops the gateway and starts it again with new BACKENDS, keeping the RouterDO's storage. */
  restartGateway(entries: readonly BackendEntry[]): Promise<void>;
  close(): Promise<void>;
}

export type Rig = RigOf<readonly Emulator[]>;
export type IsolatedRig = RigOf<EmulatorFleet>;

export function emulatorEntries(urls: readonly string[]): BackendEntry[] {
  return urls.map((url, i) => backendEntry(`emu-${i + 1}`, url));
}

export function backendEntry(id: string, url: string): BackendEntry {
  return {
    id,
    url,
    models: [MODEL],
    apiKey: EMULATOR_KEY,
    weight: 1,
    kvCacheTokens: DEFAULT_ENGINE_CONFIG.kvCacheTokens,
  };
}

/** VmRSS of a /proc/<pid>/status text, bytes; undefined when absent. */
export function parseVmRssBytes(status: string): number | undefined {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return m === null ? undefined : Number(m[1]) * 1024;
}

function readRss(pid: number): number | undefined {
  try {
    return parseVmRssBytes(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return undefined;
  }
}

function emulatorOptions(n: number): EmulatorOptions[] {
  return Array.from({ length: n }, () => ({
    port: 0,
    host: "127.0.0.1",
    model: MODEL,
    apiKey: EMULATOR_KEY,
  }));
}

/** The emulators in this process: each one's handle stops, restarts and faults it. */
export async function startRig(opts: RigOptions): Promise<Rig> {
  const emulators = await startEmulatorsHere(emulatorOptions(opts.emulators));
  return rigAround(
    emulators,
    emulators.map((e) => e.url),
    async () => {
      await Promise.allSettled(emulators.map((e) => e.close()));
    },
    opts,
  );
}

/**
 * The emulators on a thread of their own (fleet.ts): only their addresses and counters are reachable, and
 * a request that keeps one busy (a long prompt to tokenize) delays that thread, never this one's timers
 * and reads, so a judge of answers sees the gateway's timing, not its own backends'.
 */
export async function startIsolatedRig(opts: RigOptions): Promise<IsolatedRig> {
  const fleet = await startEmulatorFleet(emulatorOptions(opts.emulators), { thread: true });
  return rigAround(fleet, fleet.urls, () => fleet.close(), opts);
}

async function rigAround<E>(
  emulators: E,
  urls: readonly string[],
  closeEmulators: () => Promise<void>,
  opts: RigOptions,
): Promise<RigOf<E>> {
  const stateDir = await mkdtemp(join(tmpdir(), "pgw-faults-do-"));
  const start = (entries: readonly BackendEntry[]): Promise<Gateway> =>
    startGateway({
      backends: entries,
      policy: "prefix_aware",
      apiKey: opts.gatewayKeys ?? GATEWAY_KEY,
      adminToken: ADMIN_TOKEN,
      configPath: opts.configPath,
      stateDir,
      ...(opts.vars !== undefined || opts.cells !== undefined
        ? {
            vars: { ...opts.vars, ...(opts.cells !== undefined ? { ROUTER_CELLS: String(opts.cells) } : {}) },
          }
        : {}),
    });
  let entries = (opts.entries ?? emulatorEntries)(urls);
  let gateway: Gateway;
  try {
    gateway = await start(entries);
  } catch (err) {
    await closeEmulators().catch(() => {});
    await rm(stateDir, { recursive: true, force: true });
    throw err;
  }
  // The pool's /healthz entry: one RouterDO's stats, or each cell's (pool-stats.ts merges them).
  const poolHealth = async (): Promise<Parameters<typeof poolStatsOf>[0]> => {
    try {
      const res = await fetch(`${gateway.url}/healthz`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        signal: AbortSignal.timeout(5000),
      });
      const body = (await res.json()) as { pools?: Record<string, Parameters<typeof poolStatsOf>[0]> };
      return body.pools?.[MODEL];
    } catch {
      return undefined;
    }
  };
  const poolStats = async (): Promise<PoolStats | undefined> =>
    poolStatsOf(
      await poolHealth(),
      entries.map((b) => b.id),
    );
  return {
    emulators,
    get ids() {
      return entries.map((b) => b.id);
    },
    get gateway() {
      return gateway;
    },
    get url() {
      return gateway.url;
    },
    poolStats,
    cellMembers: async () => cellMembers(await poolHealth()),
    async backendStats(id) {
      return (await poolStats())?.backends.find((b) => b.id === id);
    },
    rssBytes: () => readRss(gateway.pgid),
    cpuMs: () => groupCpuByCommand(gateway.pgid)["workerd:worker"] ?? 0,
    async restartGateway(next) {
      await gateway.close();
      entries = [...next];
      gateway = await start(entries);
    },
    async close() {
      await gateway.close().catch(() => {});
      await closeEmulators().catch(() => {});
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}
