/**
 * Runs every requested policy over one prepared workload and the oracle once:
 * the data behind a report. Policies run one after another on fresh engines
 * and a fresh Router, with the same seed.
 */
import { type HintStats, hintStats, type MaxTokensModel } from "./client-max-tokens";
import { type OracleResult, oracleHitRate } from "./oracle";
import { routerFactory, type SimPolicyName, viewOf } from "./policies";
import type { PreparedWorkload } from "./prepare";
import { type CountStats, countStats } from "./request-view";
import { type FleetConfig, type PolicyResult, simulatePolicy } from "./simulator";

export interface SimReport {
  readonly workload: string;
  readonly requests: number;
  readonly malformed: number;
  readonly blockTokens: number;
  /** Tokens the gateway hashes: the window our policies' keys cover. */
  readonly prefixTokens: number;
  /** How clients set max_tokens (our policies' output hint), and what that gave on this workload. */
  readonly maxTokens: { readonly model: MaxTokensModel } & HintStats;
  /** How far the gateway's prompt-token counts (our policies' input) were from the true counts. */
  readonly promptCount: CountStats;
  readonly fleet: FleetConfig;
  readonly oracle: OracleResult;
  readonly policies: readonly PolicyResult[];
  /** Wall ms: hashing the workload, then all policy runs including the oracle. */
  readonly prepareMs: number;
  readonly simulateMs: number;
}

/** How far a runPolicies call is: policy `index` (0-based) of `count`, `sent` of its `total` arrivals. */
export interface PolicyProgress {
  readonly policy: SimPolicyName;
  readonly index: number;
  readonly count: number;
  readonly sent: number;
  readonly total: number;
}

export function runPolicies(
  w: PreparedWorkload,
  fleet: FleetConfig,
  policies: readonly SimPolicyName[],
  onResult?: (r: PolicyResult) => void,
  clock: () => number = () => performance.now(),
  onProgress?: (p: PolicyProgress) => void,
): SimReport {
  const t0 = clock();
  const capacityBlocks = Math.floor((fleet.backends * fleet.kvCacheTokens) / w.blockTokens);
  const oracle = oracleHitRate(
    w.requests.map((r, i) => ({ blocks: w.promptBlocks[i]!, promptTokens: r.promptTokens })),
    capacityBlocks,
    w.blockTokens,
  );
  const results: PolicyResult[] = [];
  for (const [index, p] of policies.entries()) {
    const observer =
      onProgress === undefined
        ? undefined
        : {
            replayed: (sent: number, total: number) =>
              onProgress({ policy: p, index, count: policies.length, sent, total }),
          };
    const r = simulatePolicy(w, fleet, p, routerFactory(p, w.blockTokens), viewOf(p), clock, observer);
    results.push(r);
    onResult?.(r);
  }
  return {
    workload: w.name,
    requests: w.requests.length,
    malformed: w.malformed,
    blockTokens: w.blockTokens,
    prefixTokens: w.prefixTokens,
    maxTokens: { model: w.maxTokensModel, ...hintStats(w.requests, w.maxTokens) },
    promptCount: countStats(w.requests, w.gatewayPromptTokens, w.prefixTokens),
    fleet,
    oracle,
    policies: results,
    prepareMs: w.prepareMs,
    simulateMs: clock() - t0,
  };
}
