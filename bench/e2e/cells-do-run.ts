/**
 * K RouterDO cells driven at once, in one of two layouts, from one frozen
 * bundle of the do-driver fixture (do-driver-bundle.ts):
 *
 * - `one-process`: every cell is an object in the same workerd process (one
 *   /drive with cells=K). Local workerd runs a process's isolates and objects
 *   on one thread, so this layout cannot use more than one core, whatever K.
 * - `processes`: cell j runs in workerd process j, each with its own port and
 *   Durable Object storage dir (startGateway → workerd-runtime.ts, the same
 *   config generator), driven by K concurrent /drive?cell=j calls. Distinct
 *   Durable Objects in production run on separate threads or machines; K
 *   processes are the closest this machine gets to that.
 *
 * Each cell gets the same callers and decisions in both layouts. The run is
 * bounded: a fixed number of decisions per cell, then every call returns.
 * CPU is read per workerd process from /proc (proc-cpu.ts) and for this
 * client from process.cpuUsage(), over the client's wall clock.
 */
import { loadavg } from "node:os";
import type { CellsMode, CellsRun, ProcessShare } from "./cells-do-summary";
import { type Gateway, type GatewayRuntime, startGateway } from "./gateway";
import { groupCpuByCommand } from "./proc-cpu";

/** Decisions a server runs once at start (V8 optimises the RouterDO's code) and per cell before a timed run. */
const WARM_DECISIONS = 500;
const HYDRATE_DECISIONS_PER_CELL = 50;
/** A /drive that has not answered by then is a hung runtime, not a slow one (2000 decisions take ~1 s). */
const DRIVE_TIMEOUT_MS = 300_000;

interface DriveAnswer {
  readonly decisions: number;
  readonly ms: number;
}

async function drive(server: Gateway, query: Record<string, number>): Promise<DriveAnswer> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
  const res = await fetch(`${server.url}/drive?fresh=1&${qs}`, {
    signal: AbortSignal.timeout(DRIVE_TIMEOUT_MS),
  });
  if (!res.ok) throw new Error(`do-driver ${server.url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as DriveAnswer;
}

function workerdCpuMs(server: Gateway): number {
  return groupCpuByCommand(server.pgid)["workerd:worker"] ?? 0;
}

export interface CellsRig {
  /** The server of the one-process layout (absent when that layout is not run). */
  readonly one: Gateway | undefined;
  /** One server per cell of the processes layout, as many as the largest K. */
  readonly perCell: readonly Gateway[];
  close(): Promise<void>;
}

/** Starts the servers, one at a time (each takes a port the OS just released), and warms each. */
export async function startCellsRig(
  configPath: string,
  projectDir: string,
  modes: readonly CellsMode[],
  maxCells: number,
  runtime: GatewayRuntime,
): Promise<CellsRig> {
  const started: Gateway[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(started.map((s) => s.close()));
  };
  const start = async (): Promise<Gateway> => {
    const gw = await startGateway({
      backends: [],
      policy: "prefix_aware",
      apiKey: "unused-gateway-key-0",
      configPath,
      projectDir,
      runtime,
    });
    started.push(gw);
    await drive(gw, { clients: 1, decisions: WARM_DECISIONS });
    return gw;
  };
  try {
    const one = modes.includes("one-process") ? await start() : undefined;
    const perCell: Gateway[] = [];
    if (modes.includes("processes")) for (let j = 0; j < maxCells; j++) perCell.push(await start());
    return { one, perCell, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The calls of one timed run: which server, with which query. */
function plan(
  rig: CellsRig,
  mode: CellsMode,
  cells: number,
  callersPerCell: number,
  decisionsPerCell: number,
): { server: Gateway; query: Record<string, number> }[] {
  if (mode === "one-process") {
    if (rig.one === undefined) throw new Error("one-process layout not started");
    return [
      {
        server: rig.one,
        query: { clients: callersPerCell * cells, decisions: decisionsPerCell * cells, cells },
      },
    ];
  }
  if (rig.perCell.length < cells) throw new Error(`${cells} cells, ${rig.perCell.length} processes started`);
  return rig.perCell.slice(0, cells).map((server, cell) => ({
    server,
    query: { clients: callersPerCell, decisions: decisionsPerCell, cells, cell },
  }));
}

export async function runCells(
  rig: CellsRig,
  mode: CellsMode,
  cells: number,
  callersPerCell: number,
  decisionsPerCell: number,
  round: number,
): Promise<CellsRun> {
  const calls = plan(rig, mode, cells, callersPerCell, decisionsPerCell);
  // Hydrate this run's objects (their spec, their first requests) so the timed run is decisions only.
  await Promise.all(
    calls.map(({ server, query }) =>
      drive(server, {
        ...query,
        clients: Math.min(query.clients!, cells),
        decisions: HYDRATE_DECISIONS_PER_CELL * (mode === "one-process" ? cells : 1),
      }),
    ),
  );
  const all = [...(rig.one === undefined ? [] : [rig.one]), ...rig.perCell];
  const driven = new Set(calls.map((c) => c.server));
  const loadAverage = loadavg();
  const cpu0 = all.map(workerdCpuMs);
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  const answers = await Promise.all(calls.map(({ server, query }) => drive(server, query)));
  const wallMs = performance.now() - t0;
  const client = process.cpuUsage(client0);
  const cpu = all.map((s, i) => workerdCpuMs(s) - cpu0[i]!);
  const perProcess: ProcessShare[] = calls.map(({ server }, i) => ({
    decisions: answers[i]!.decisions,
    ms: answers[i]!.ms,
    workerdCpuMs: cpu[all.indexOf(server)]!,
  }));
  for (const [i, p] of perProcess.entries())
    if (p.decisions < calls[i]!.query.decisions!)
      throw new Error(
        `${calls[i]!.server.url}: ${p.decisions} decisions, asked ${calls[i]!.query.decisions}`,
      );
  return {
    mode,
    cells,
    round,
    callers: callersPerCell * cells,
    wallMs,
    perProcess,
    // Servers not driven in this run should be idle; their CPU is counted, not assumed zero.
    idleWorkerdCpuMs: all.reduce((sum, s, i) => sum + (driven.has(s) ? 0 : cpu[i]!), 0),
    clientCpuMs: (client.user + client.system) / 1000,
    loadAverage,
  };
}
