/**
 * N emulated backends behind one handle, either in this process or on a
 * thread of their own. The e2e replay runs them on their own thread: the
 * client that times requests and the emulators that serve them must not
 * share an event loop, or a prompt being tokenized by one emulator delays
 * every other emulator's engine steps and every first byte the client is
 * waiting to read — measured as latency that neither a gateway nor a GPU
 * would add (a 16-emulator Mooncake replay saw 127 ms p50 "outside the
 * backend" with no gateway at all).
 */
import { Worker } from "node:worker_threads";
import type { EngineMetrics } from "../../sim/model/types";
import type { FleetReply, FleetRequest } from "./fleet-protocol";
import { type Emulator, type EmulatorOptions, startEmulator } from "./server";

export interface EmulatorFleet {
  readonly urls: readonly string[];
  /** Each emulator's engine counters, in order. */
  metrics(): Promise<EngineMetrics[]>;
  /** Each request id's server TTFT (ms, arrival to first content) from whichever emulator served it. */
  serverTtftMs(requestIds: readonly string[]): Promise<(number | undefined)[]>;
  close(): Promise<void>;
}

/** Starts the emulators in this process, one after another; on failure closes those already up. */
export async function startEmulatorsHere(options: readonly EmulatorOptions[]): Promise<Emulator[]> {
  const started: Emulator[] = [];
  try {
    for (const o of options) started.push(await startEmulator(o));
  } catch (err) {
    await Promise.allSettled(started.map((e) => e.close()));
    throw err;
  }
  return started;
}

/** The server TTFT of a request id from whichever emulator served it (a gateway may retry elsewhere). */
export function servedTtftMs(emulators: readonly Emulator[], requestId: string): number | undefined {
  for (const e of emulators) {
    const ms = e.serverTtftMs(requestId);
    if (ms !== undefined) return ms;
  }
  return undefined;
}

async function startInProcess(options: readonly EmulatorOptions[]): Promise<EmulatorFleet> {
  const started = await startEmulatorsHere(options);
  return {
    urls: started.map((e) => e.url),
    metrics: async () => started.map((e) => e.metrics()),
    serverTtftMs: async (ids) => ids.map((id) => servedTtftMs(started, id)),
    close: async () => {
      await Promise.allSettled(started.map((e) => e.close()));
    },
  };
}

/** Omit distributed over a union (plain Omit would merge its members). */
type WithoutId<T> = T extends unknown ? Omit<T, "id"> : never;

async function startOnThread(options: readonly EmulatorOptions[]): Promise<EmulatorFleet> {
  // The thread loads TypeScript through tsx, whoever started us (the tsx CLI, vitest, plain node).
  const worker = new Worker(new URL("./fleet-thread.ts", import.meta.url), {
    workerData: options,
    execArgv: ["--import", "tsx"],
  });
  let next = 0;
  const pending = new Map<number, { resolve: (r: FleetReply) => void; reject: (e: Error) => void }>();
  let failed: Error | undefined;
  const failAll = (err: Error): void => {
    failed ??= err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  worker.on("error", failAll);
  worker.on("exit", (code) => failAll(new Error(`emulator thread exited (${code})`)));
  worker.on("message", (m: FleetReply) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.kind === "error") p?.reject(new Error(m.message));
    else p?.resolve(m);
  });
  const ask = (req: WithoutId<FleetRequest>): Promise<FleetReply> => {
    if (failed !== undefined) return Promise.reject(failed);
    const id = ++next;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ ...req, id } as FleetRequest);
    });
  };
  const expect = <K extends FleetReply["kind"]>(r: FleetReply, kind: K): Extract<FleetReply, { kind: K }> => {
    if (r.kind !== kind) throw new Error(`emulator thread: expected ${kind}, got ${r.kind}`);
    return r as Extract<FleetReply, { kind: K }>;
  };
  try {
    const ready = expect(await ask({ op: "start" }), "started");
    return {
      urls: ready.urls,
      metrics: async () => expect(await ask({ op: "metrics" }), "metrics").metrics,
      serverTtftMs: async (ids) =>
        expect(await ask({ op: "ttft", ids: [...ids] }), "ttft").ms.map((x) => x ?? undefined),
      close: async () => {
        try {
          await ask({ op: "close" });
        } finally {
          await worker.terminate();
        }
      },
    };
  } catch (err) {
    await worker.terminate();
    throw err;
  }
}

/** Starts one emulator per options entry, here (`thread: false`) or on a thread of their own. */
export function startEmulatorFleet(
  options: readonly EmulatorOptions[],
  where: { readonly thread: boolean },
): Promise<EmulatorFleet> {
  return where.thread ? startOnThread(options) : startInProcess(options);
}
