/**
 * What the routers can be given of every request, computed once and shared
 * by every policy run (and by the oracle): the keys of every full block of
 * the prompt (what the engines hash, and what a peer that sees the whole
 * prompt routes on), the keys of its first `prefixTokens` tokens (what the
 * gateway hashes: its PREFIX_TOKENS, 32768 tokens by default; for a prompt
 * with no full block there, the key of the whole short prompt), the prompt
 * token count the gateway computes (exact only that far: request-view.ts),
 * and the max_tokens its client sent (client-max-tokens.ts).
 * request-view.ts says which policy gets which.
 */
import { SETTINGS } from "../src/routing/defaults";
import type { BlockKey } from "../src/routing/types";
import {
  clientMaxTokens,
  DEFAULT_MAX_TOKENS_MODEL,
  MAX_TOKENS_MODELS,
  type MaxTokensModel,
  type MaxTokensModelName,
} from "./client-max-tokens";
import { gatewayPromptTokens, gatewayUnconfirmedTokens } from "./request-view";
import { requestBlockKeys, requestPromptKey } from "./workloads/segments";
import type { Workload, WorkloadRequest } from "./workloads/types";

/** The gateway's own default (PREFIX_TOKENS). */
export const DEFAULT_PREFIX_TOKENS = SETTINGS.PREFIX_TOKENS.default;

export interface PreparedWorkload {
  readonly name: string;
  readonly blockTokens: number;
  readonly requests: readonly WorkloadRequest[];
  /** Keys of every full block of each prompt. */
  readonly promptBlocks: readonly (readonly BlockKey[])[];
  /** Keys of each prompt's first `prefixTokens` tokens (a prefix of promptBlocks). */
  readonly gatewayBlocks: readonly (readonly BlockKey[])[];
  /** Tokens the gateway hashes (PREFIX_TOKENS). */
  readonly prefixTokens: number;
  /** The gateway's key of each prompt with no full block in its window (undefined for the others). */
  readonly promptKeys: readonly (BlockKey | undefined)[];
  /** Each prompt's token count as the gateway computes it: exact up to prefixTokens, estimated past. */
  readonly gatewayPromptTokens: readonly number[];
  /**
   * Of each gateway count, what the Worker's estimate cannot vouch for (RouteRequest.unconfirmedTokens):
   * only prompts with their text have it (request-view.ts gatewayUnconfirmedTokens). Absent: none.
   */
  readonly gatewayUnconfirmedTokens?: readonly (number | undefined)[];
  /** max_tokens as each request's client sent it (undefined: none); the true length stays in `requests`. */
  readonly maxTokens: readonly (number | undefined)[];
  /** How `maxTokens` was made. */
  readonly maxTokensModel: MaxTokensModel;
  readonly malformed: number;
  /** Wall ms spent hashing. */
  readonly prepareMs: number;
}

export interface PrepareOptions {
  /** Tokens the gateway hashes (default PREFIX_TOKENS). */
  readonly prefixTokens?: number;
  /** How clients set max_tokens (default `clients`). */
  readonly maxTokens?: MaxTokensModelName;
  /** Seed of the max_tokens draws and of the gateway's count past its window (the run's seed; default 1). */
  readonly seed?: number;
  /** Called every PREPARE_PROGRESS_EVERY requests hashed and after the last: hashing a long trace takes a while. */
  readonly onProgress?: (hashed: number, total: number) => void;
}

/** Requests hashed between two PrepareOptions.onProgress calls. */
export const PREPARE_PROGRESS_EVERY = 4096;

export function prepareWorkload(
  w: Workload,
  opts: PrepareOptions = {},
  clock: () => number = () => performance.now(),
): PreparedWorkload {
  const t0 = clock();
  const prefixTokens = opts.prefixTokens ?? DEFAULT_PREFIX_TOKENS;
  const maxTokensModel = MAX_TOKENS_MODELS[opts.maxTokens ?? DEFAULT_MAX_TOKENS_MODEL];
  const cap = Math.floor(prefixTokens / w.blockTokens);
  for (let i = 1; i < w.requests.length; i++)
    if (w.requests[i]!.arrivalMs < w.requests[i - 1]!.arrivalMs)
      throw new Error(`workload ${w.name}: requests must be sorted by arrival (index ${i})`);
  const total = w.requests.length;
  const promptBlocks = w.requests.map((r, i) => {
    const keys = requestBlockKeys(r, w.blockTokens);
    if ((i + 1) % PREPARE_PROGRESS_EVERY === 0 || i + 1 === total) opts.onProgress?.(i + 1, total);
    return keys;
  });
  const gatewayBlocks = promptBlocks.map((b) => (b.length > cap ? b.slice(0, cap) : b));
  const promptKeys = w.requests.map((r, i) =>
    gatewayBlocks[i]!.length === 0 ? requestPromptKey(r, w.blockTokens, prefixTokens) : undefined,
  );
  const seed = opts.seed ?? 1;
  return {
    name: w.name,
    blockTokens: w.blockTokens,
    requests: w.requests,
    promptBlocks,
    gatewayBlocks,
    prefixTokens,
    promptKeys,
    gatewayPromptTokens: gatewayPromptTokens(w.requests, promptBlocks, w.blockTokens, prefixTokens, seed),
    gatewayUnconfirmedTokens: gatewayUnconfirmedTokens(w.requests, prefixTokens),
    maxTokens: clientMaxTokens(w.requests, maxTokensModel, seed),
    maxTokensModel,
    malformed: w.malformed,
    prepareMs: clock() - t0,
  };
}
