/**
 * Node side of the workerd tests: starts real backend emulators (HTTP on
 * loopback, ephemeral ports) before the Worker boots, and hands their
 * addresses to vitest.config.ts, which turns them into the BACKENDS binding.
 * Nothing here is a mock: the gateway talks HTTP to real servers.
 */
import type { TestProject } from "vitest/node";
import { startAuxBackend } from "./aux-backend";

export const TEST_MODEL = "test-model";
export const TEST_BACKEND_KEY = "emu-test-key";
/** Four emulators: enough to see stickiness, spreading and spill under a bounded-load cap. */
const COUNT = 4;

declare module "vitest" {
  export interface ProvidedContext {
    emulatorUrls: string[];
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const emulators = await Promise.all(
    Array.from({ length: COUNT }, () => startAuxBackend({ model: TEST_MODEL, apiKey: TEST_BACKEND_KEY })),
  );
  project.provide(
    "emulatorUrls",
    emulators.map((e) => e.url),
  );
  return async () => {
    await Promise.all(emulators.map((e) => e.close()));
  };
}
