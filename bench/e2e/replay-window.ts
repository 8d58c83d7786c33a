/**
 * What an e2e replay sends, from its flags: the emulators' engine config, the workload (generated-shared-
 * prefix shaped by --system-tokens / --question-tokens / --output-tokens), and the window of it the replay
 * covers, each answer capped at --max-output-tokens. The replay (main.ts) and its simulator-only check
 * (sim-shares.ts) both build their requests here, so they replay the same ones.
 */
import { DEFAULT_KV_ALLOCATION } from "../../sim/model/engine-config";
import { DEFAULT_ENGINE_CONFIG } from "../../sim/model/engine-model";
import type { EngineConfig } from "../../sim/model/types";
import { isTraceSpec, loadWorkload } from "../../sim/workloads/index";
import { generatedSharedPrefix } from "../../sim/workloads/shared-prefix";
import type { Workload, WorkloadRequest } from "../../sim/workloads/types";
import type { E2eArgs } from "./args";
import { selectWindow } from "./requests";

async function workloadFor(a: E2eArgs): Promise<Workload> {
  const shaped = a.systemTokens ?? a.questionTokens ?? a.outputTokens;
  if (a.workload === "generated-shared-prefix" && shaped !== undefined)
    return generatedSharedPrefix({
      rate: a.rate,
      seed: a.seed,
      ...(a.systemTokens !== undefined ? { systemPromptTokens: a.systemTokens } : {}),
      ...(a.questionTokens !== undefined ? { questionTokens: a.questionTokens } : {}),
      ...(a.outputTokens !== undefined ? { outputTokens: a.outputTokens } : {}),
    });
  // Traces load whole at speed 1 (model time): --requests caps the window (main), and the replay compresses
  // time itself (requests.ts).
  return loadWorkload(a.workload, {
    rate: a.rate,
    seed: a.seed,
    speed: 1,
    ...(a.requests !== undefined && !isTraceSpec(a.workload) ? { requests: a.requests } : {}),
  });
}

export interface ReplayWindow {
  readonly engine: EngineConfig;
  readonly workload: Workload;
  readonly window: readonly WorkloadRequest[];
}

export async function replayWindow(a: E2eArgs): Promise<ReplayWindow> {
  const engine: EngineConfig = {
    ...DEFAULT_ENGINE_CONFIG,
    // Written out (it is the engine model's default) so the replay's report says which allocation the
    // emulators and the prediction ran: e2e reports written before kv-default have none, and ran reserve.
    kvAllocation: DEFAULT_KV_ALLOCATION,
    ...(a.kvCacheTokens !== undefined ? { kvCacheTokens: a.kvCacheTokens } : {}),
  };
  const workload = await workloadFor(a);
  const cap = a.maxOutputTokens;
  const isTrace = isTraceSpec(a.workload);
  const window = selectWindow(workload.requests, {
    speed: a.speed,
    durationMs: a.durationS * 1000,
    maxRequests: isTrace && a.requests !== undefined ? Math.min(a.maxRequests, a.requests) : a.maxRequests,
  }).map((r) => (cap !== undefined && r.outputTokens > cap ? { ...r, outputTokens: cap } : r));
  return { engine, workload, window };
}

/** The fleet the simulator's prediction replays the window on: the replay's size, engines, seed, scrape and second client. */
export function predictionFleet(a: E2eArgs, engine: EngineConfig) {
  return {
    backends: a.backends,
    engine,
    seed: a.seed,
    scrapeMs: a.scrapeMs,
    ...(a.secondClient !== undefined ? { secondClient: a.secondClient } : {}),
  };
}
