/** Messages between an EmulatorFleet handle and its thread (fleet.ts, fleet-thread.ts). */
import type { EngineMetrics } from "../../sim/model/types";

export type FleetRequest =
  | { readonly id: number; readonly op: "start" }
  | { readonly id: number; readonly op: "metrics" }
  | { readonly id: number; readonly op: "ttft"; readonly ids: readonly string[] }
  | { readonly id: number; readonly op: "close" };

export type FleetReply =
  | { readonly id: number; readonly kind: "started"; readonly urls: readonly string[] }
  | { readonly id: number; readonly kind: "metrics"; readonly metrics: EngineMetrics[] }
  /** null where no emulator served the id (structured clone keeps null, not undefined, in arrays). */
  | { readonly id: number; readonly kind: "ttft"; readonly ms: readonly (number | null)[] }
  | { readonly id: number; readonly kind: "closed" }
  | { readonly id: number; readonly kind: "error"; readonly message: string };
