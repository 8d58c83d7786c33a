/**
 * The simulator's prediction for exactly the requests the replay sends: same
 * window, same fleet size, same engine config, same routing core. Block size
 * is the emulators' (16), not the workload's natural one (Mooncake: 512), so
 * the simulated engines cache what the emulators cache. Backend ids are the
 * emulators' (emu-1…): the ring is keyed by them.
 */
import type { MaxTokensModelName } from "../../sim/client-max-tokens";
import type { EngineConfig } from "../../sim/model/types";
import { isSimPolicy, type SimPolicyName } from "../../sim/policies";
import { prepareWorkload } from "../../sim/prepare";
import { runPolicies, type SimReport } from "../../sim/run";
import type { SecondClient } from "../../sim/second-client";
import type { PolicyResult } from "../../sim/simulator";
import type { WorkloadRequest } from "../../sim/workloads/types";
import { emulatorIds } from "./backend-ids";

/** The simulator's figures the e2e report sets beside its measurements (TTFT/E2E in model-time ms). */
export type SimPrediction = Pick<
  PolicyResult,
  "policy" | "hitRate" | "ttftP50Ms" | "ttftP90Ms" | "ttftP99Ms" | "e2eP50Ms" | "e2eP99Ms"
>;

export interface Prediction {
  readonly policies: readonly SimPrediction[];
  /** Hit rate with the fleet's total capacity and perfect knowledge (the simulator's oracle). */
  readonly oracleHitRate: number;
}

/** The simulator's whole report for the replay's requests (every figure of each policy). */
export function predictionReport(
  name: string,
  requests: readonly WorkloadRequest[],
  policies: readonly string[],
  fleet: {
    readonly backends: number;
    readonly engine: EngineConfig;
    readonly seed: number;
    /** The gateway's ENGINE_SCRAPE_MS, and the second client around it: the simulator replays both alike. */
    readonly scrapeMs?: number;
    readonly secondClient?: SecondClient;
  },
  prefixTokens: number,
  /** How the replay's clients set max_tokens: the simulated router must be told what the gateway's was. */
  maxTokens: MaxTokensModelName,
): SimReport {
  const w = prepareWorkload(
    { name, blockTokens: fleet.engine.blockTokens, requests, malformed: 0 },
    { prefixTokens, maxTokens, seed: fleet.seed },
  );
  const { kvCacheTokens, blockTokens: _blockTokens, ...engine } = fleet.engine;
  const names = policies.filter((p): p is SimPolicyName => isSimPolicy(p));
  return runPolicies(
    w,
    {
      backends: fleet.backends,
      ids: emulatorIds(fleet.backends),
      kvCacheTokens,
      engine,
      seed: fleet.seed,
      ...(fleet.scrapeMs !== undefined && fleet.scrapeMs > 0 ? { scrapeMs: fleet.scrapeMs } : {}),
      ...(fleet.secondClient !== undefined ? { secondClient: fleet.secondClient } : {}),
    },
    names,
  );
}

/** The figures the e2e report sets beside its measurements. */
export function predict(
  name: string,
  requests: readonly WorkloadRequest[],
  policies: readonly string[],
  fleet: Parameters<typeof predictionReport>[3],
  prefixTokens: number,
  maxTokens: MaxTokensModelName,
): Prediction {
  const report = predictionReport(name, requests, policies, fleet, prefixTokens, maxTokens);
  return {
    oracleHitRate: report.oracle.hitRate,
    policies: report.policies.map((r) => ({
      policy: r.policy,
      hitRate: r.hitRate,
      ttftP50Ms: r.ttftP50Ms,
      ttftP90Ms: r.ttftP90Ms,
      ttftP99Ms: r.ttftP99Ms,
      e2eP50Ms: r.e2eP50Ms,
      e2eP99Ms: r.e2eP99Ms,
    })),
  };
}
