/**
 * Registry of the peer baselines: faithful re-implementations of the routers
 * users compare us with, as simulator policies. Sources, defaults and every
 * approximation are listed in SOURCES.md beside this file.
 */

import type { RoutingPolicy } from "../../src/routing/types";
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
