/**
 * Block keys of every request, computed once and shared by every policy run
 * (and by the oracle). The engine gets all full blocks; the router gets the
 * first `prefixTokens` worth (the gateway hashes only that much: its
 * PREFIX_TOKENS, 8192 tokens by default).
 */
import { SETTINGS } from "../src/routing/defaults";
import type { BlockKey } from "../src/routing/types";
import { requestBlockKeys } from "./workloads/segments";
import type { Workload, WorkloadRequest } from "./workloads/types";

/** The gateway's own default (PREFIX_TOKENS). */
export const DEFAULT_PREFIX_TOKENS = SETTINGS.PREFIX_TOKENS.default;

export interface PreparedWorkload {
  readonly name: string;
  readonly blockTokens: number;
  readonly requests: readonly WorkloadRequest[];
  readonly engineBlocks: readonly (readonly BlockKey[])[];
  readonly routerBlocks: readonly (readonly BlockKey[])[];
  readonly malformed: number;
  /** Wall ms spent hashing. */
  readonly prepareMs: number;
}

export function prepareWorkload(
  w: Workload,
  prefixTokens = DEFAULT_PREFIX_TOKENS,
  clock: () => number = () => performance.now(),
): PreparedWorkload {
  const t0 = clock();
  const cap = Math.floor(prefixTokens / w.blockTokens);
  for (let i = 1; i < w.requests.length; i++)
    if (w.requests[i]!.arrivalMs < w.requests[i - 1]!.arrivalMs)
      throw new Error(`workload ${w.name}: requests must be sorted by arrival (index ${i})`);
  const engineBlocks = w.requests.map((r) => requestBlockKeys(r, w.blockTokens));
  const routerBlocks = engineBlocks.map((b) => (b.length > cap ? b.slice(0, cap) : b));
  return {
    name: w.name,
    blockTokens: w.blockTokens,
    requests: w.requests,
    engineBlocks,
    routerBlocks,
    malformed: w.malformed,
    prepareMs: clock() - t0,
  };
}
