/** The emulator thread of an EmulatorFleet (fleet.ts): starts the emulators, answers the handle. */
import { parentPort, workerData } from "node:worker_threads";
import { servedTtftMs } from "./fleet";
import type { FleetReply, FleetRequest } from "./fleet-protocol";
import { type Emulator, type EmulatorOptions, startEmulator } from "./server";

const port = parentPort;
if (port === null) throw new Error("fleet-thread.ts runs as a worker thread");
const options = workerData as readonly EmulatorOptions[];
const emulators: Emulator[] = [];

async function handle(req: FleetRequest): Promise<FleetReply> {
  switch (req.op) {
    case "start":
      for (const o of options) emulators.push(await startEmulator(o));
      return { id: req.id, kind: "started", urls: emulators.map((e) => e.url) };
    case "metrics":
      return { id: req.id, kind: "metrics", metrics: emulators.map((e) => e.metrics()) };
    case "ttft":
      return {
        id: req.id,
        kind: "ttft",
        ms: req.ids.map((rid) => servedTtftMs(emulators, rid) ?? null),
      };
    case "close":
      await Promise.allSettled(emulators.map((e) => e.close()));
      return { id: req.id, kind: "closed" };
  }
}

port.on("message", (req: FleetRequest) => {
  handle(req).then(
    (reply) => port.postMessage(reply),
    (err: unknown) =>
      port.postMessage({
        id: req.id,
        kind: "error",
        message: err instanceof Error ? err.message : String(err),
      }),
  );
});
