/**
 * Node side of the workerd tests: starts real backend emulators
 * (bench/emulator: OpenAI-compatible HTTP on loopback, ephemeral ports, real
 * timing, usage with cached_tokens) before the Worker boots, and hands their
 * addresses to vitest.config.ts, which turns them into the BACKENDS binding.
 * Nothing here is a mock: the gateway talks HTTP to real servers. Their
 * control endpoint is on, so tests can make one misbehave (helpers.ts).
 * It also watches workerd's log for uncaught exceptions no test expected
 * (workerd-log.ts): the run fails on one.
 */
import type { TestProject } from "vitest/node";
import { startEmulator } from "../../bench/emulator/server";
import { startMetricsFaultServer } from "./metrics-fault-server";
import { watchWorkerdLog } from "./workerd-log";

/** Must match the names in vitest.config.ts and test/worker/helpers.ts. */
const MAIN_MODEL = "test-model";
const SPARE_MODEL = "spare-model";
const FAULT_MODEL = "fault-model";
const SCRAPE_MODEL = "scrape-model";
const BACKEND_KEY = "emu-test-key";

declare module "vitest" {
  export interface ProvidedContext {
    /** Four emulators serving test-model: the fleet of the default BACKENDS binding. */
    emulatorUrls: string[];
    /** Six emulators serving spare-model: fleets that tests swap in through a modified env. */
    spareEmulatorUrls: string[];
    /** Three emulators serving fault-model: only the fault-injection tests touch them, so whole-backend faults are safe. */
    faultEmulatorUrls: string[];
    /**
     * Two more serving fault-model, cell-empty.test.ts's alone: a cell's second backend (config refuses one server
     * listed twice for a model, so a cell's two backends are two emulators, broken together).
     */
    cellFaultEmulatorUrls: string[];
    /** Two emulators serving scrape-model: only the /metrics scrape tests load them (engine-scrape.test.ts). */
    scrapeEmulatorUrls: string[];
    /** A fake backend whose /metrics misbehaves (metrics-fault-server.ts). */
    metricsFaultUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = watchWorkerdLog();
  // control: tests switch faults on and off over HTTP (test/worker/helpers.ts, withBackendFault).
  const start = (model: string) =>
    startEmulator({ port: 0, host: "127.0.0.1", model, apiKey: BACKEND_KEY, control: true });
  const main = await Promise.all([1, 2, 3, 4].map(() => start(MAIN_MODEL)));
  // Six: cells.test.ts gives each of its four backends a server of its own, cells-admin-fleet.test.ts each of its
  // six (config refuses one server listed twice for a model).
  const spare = await Promise.all([1, 2, 3, 4, 5, 6].map(() => start(SPARE_MODEL)));
  const faulty = await Promise.all([1, 2, 3].map(() => start(FAULT_MODEL)));
  const cellFaulty = await Promise.all([1, 2].map(() => start(FAULT_MODEL)));
  const scrape = await Promise.all([1, 2].map(() => start(SCRAPE_MODEL)));
  const metricsFaults = await startMetricsFaultServer();
  project.provide(
    "emulatorUrls",
    main.map((e) => e.url),
  );
  project.provide(
    "spareEmulatorUrls",
    spare.map((e) => e.url),
  );
  project.provide(
    "faultEmulatorUrls",
    faulty.map((e) => e.url),
  );
  project.provide(
    "cellFaultEmulatorUrls",
    cellFaulty.map((e) => e.url),
  );
  project.provide(
    "scrapeEmulatorUrls",
    scrape.map((e) => e.url),
  );
  project.provide("metricsFaultUrl", metricsFaults.url);
  return async () => {
    await Promise.all(
      [...main, ...spare, ...faulty, ...cellFaulty, ...scrape, metricsFaults].map((e) => e.close()),
    );
    log.stop();
    if (log.unexpected.length > 0) {
      // Thrown from a teardown, an error is printed but leaves the exit code alone: set it too.
      process.exitCode = 1;
      throw new Error(
        `workerd reported ${log.unexpected.length} uncaught exception line(s) no test expected:\n${log.unexpected.join("\n")}`,
      );
    }
  };
}
