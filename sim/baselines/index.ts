/**
 * Registry of the peer baselines: faithful re-implementations of the routers
 * users compare us with, as simulator policies. Sources, defaults and every
 * approximation are listed in SOURCES.md beside this file.
 */

import type { RoutingPolicy } from "../../src/routing/types";
import type { RequestView } from "../request-view";
import { createDynamoKvRouter, type DynamoOptions } from "./dynamo-kv-router";
import { createLlmdScheduler, type LlmdOptions } from "./llmd-scheduler";
import { createSagemakerPrefixAware, type SagemakerOptions } from "./sagemaker-prefix-aware";
import { createSglangCacheAware, type SglangCacheAwareOptions } from "./sglang-cache-aware";

export type { FirstTokenAware } from "./dynamo-kv-router";
export { isFirstTokenAware } from "./dynamo-kv-router";

export const BASELINE_NAMES = ["sglang", "llmd", "dynamo", "sagemaker"] as const;
export type BaselineName = (typeof BASELINE_NAMES)[number];

export interface BaselineOptions {
  readonly sglang: SglangCacheAwareOptions;
  readonly llmd: LlmdOptions;
  readonly dynamo: DynamoOptions;
  readonly sagemaker: SagemakerOptions;
}

/**
 * What each peer's real router is given of a request (SOURCES.md, "Inputs",
 * has the code each line rests on). All four see the whole prompt: each
 * cuts it down itself where its code does (llm-d to 256 of its blocks,
 * SageMaker to its PrefixLength), never to our PREFIX_TOKENS, and so the
 * prompt's true length (exact: Dynamo tokenizes it all, SGLang and llm-d
 * read the whole text; SageMaker reads no length). None reads an output
 * length with its defaults.
 */
export const BASELINE_VIEWS: Readonly<Record<BaselineName, RequestView>> = {
  // cache_aware.rs inserts and matches the request's whole text (every message, extract_text_for_routing);
  // besides the text it reads only its own in-flight counts.
  sglang: { keys: "whole-prompt", promptTokens: "exact", output: "none" },
  // The prefix plugin hashes the whole prompt up to its own maxPrefixBlocksToMatch (plugin.go hashPrompt);
  // the queue and KV-use scorers read scraped engine metrics, none the request's max_tokens.
  llmd: { keys: "whole-prompt", promptTokens: "exact", output: "none" },
  // The router hashes every full block of the tokenized prompt, and its indexer holds every block KV events report;
  // an output-length hint (nvext agent_hints.osl) is read only with router_track_output_blocks, off by default.
  dynamo: { keys: "whole-prompt", promptTokens: "exact", output: "none" },
  // Keyed on the first PrefixLength characters of the request (the API reference): the policy cuts them itself.
  // The documented inputs are that prefix and the instances' in-flight requests.
  sagemaker: { keys: "whole-prompt", promptTokens: "exact", output: "none" },
};

export function isBaselineName(name: string): name is BaselineName {
  return (BASELINE_NAMES as readonly string[]).includes(name);
}

/** A fresh baseline (they carry state: trees, indexes, in-flight accounting): one per run. */
export function createBaseline<N extends BaselineName>(name: N, options?: BaselineOptions[N]): RoutingPolicy {
  switch (name as BaselineName) {
    case "sglang":
      return createSglangCacheAware(options as SglangCacheAwareOptions | undefined);
    case "llmd":
      return createLlmdScheduler(options as LlmdOptions | undefined);
    case "dynamo":
      return createDynamoKvRouter(options as DynamoOptions | undefined);
    case "sagemaker":
      return createSagemakerPrefixAware(options as SagemakerOptions | undefined);
    default:
      throw new Error(`unknown baseline "${String(name)}": expected one of ${BASELINE_NAMES.join(", ")}`);
  }
}
