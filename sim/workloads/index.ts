/**
 * Workloads by name, for the simulator and the end-to-end replay:
 * generated-shared-prefix | multi-turn | zipf | no-shared-prefix | burst | burst-mooncake |
 * mooncake | file:PATH.
 */
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { burst, burstGroupsFor, burstMooncake } from "./burst";
import { multiTurn } from "./multi-turn";
import { noSharedPrefix } from "./no-shared-prefix";
import { generatedSharedPrefix } from "./shared-prefix";
import { readTraceFile } from "./trace-file";
import type { Workload } from "./types";
import { zipfHotPrefix } from "./zipf-hot-prefix";

export const WORKLOAD_NAMES = [
  "generated-shared-prefix",
  "multi-turn",
  "zipf",
  "no-shared-prefix",
  "burst",
  "burst-mooncake",
  "mooncake",
] as const;

/** The Mooncake conversation trace: $MOONCAKE_TRACE, else ../shared/traces/ beside the checkout. */
export function mooncakeTracePath(): string {
  const env = process.env.MOONCAKE_TRACE;
  if (env !== undefined && env !== "") return env;
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  return resolve(repo, "../shared/traces/mooncake_conversation.jsonl");
}

/** True for a recorded trace (mooncake, file:PATH): arrivals and lengths come from the file, not a seed. */
export function isTraceSpec(spec: string): boolean {
  return spec === "mooncake" || spec.startsWith("file:");
}

export interface WorkloadArgs {
  /** Requests per second (synthetic workloads). */
  readonly rate: number;
  readonly seed: number;
  /** Replay speed (traces). */
  readonly speed?: number;
  /** Request count (synthetic workloads that take one; burst: rounded to whole groups of 16; traces: a cap). */
  readonly requests?: number;
}

export async function loadWorkload(spec: string, args: WorkloadArgs): Promise<Workload> {
  const n = args.requests !== undefined ? { requests: args.requests } : {};
  switch (spec) {
    case "generated-shared-prefix":
      return generatedSharedPrefix({ rate: args.rate, seed: args.seed });
    case "multi-turn":
      return multiTurn({ rate: args.rate, seed: args.seed, ...n });
    case "zipf":
      return zipfHotPrefix({ rate: args.rate, seed: args.seed, ...n });
    case "no-shared-prefix":
      return noSharedPrefix({ rate: args.rate, seed: args.seed, ...n });
    case "burst":
    case "burst-mooncake": {
      const make = spec === "burst" ? burst : burstMooncake;
      const groups = args.requests !== undefined ? { groups: burstGroupsFor(args.requests) } : {};
      return make({ rate: args.rate, seed: args.seed, ...groups });
    }
    case "mooncake":
      return readTraceFile(mooncakeTracePath(), {
        name: "mooncake",
        speed: args.speed ?? 1,
        ...(args.requests !== undefined ? { limit: args.requests } : {}),
      });
  }
  if (spec.startsWith("file:")) {
    const path = spec.slice("file:".length);
    return readTraceFile(path, {
      speed: args.speed ?? 1,
      ...(args.requests !== undefined ? { limit: args.requests } : {}),
    });
  }
  throw new Error(`unknown workload "${spec}": use one of ${WORKLOAD_NAMES.join(", ")} or file:PATH`);
}
