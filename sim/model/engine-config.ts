/**
 * The bounds an EngineConfig must respect, and the defaults of its optional
 * fields, checked once when an engine is built.
 */
import { type EngineConfig, KV_ALLOCATIONS, type KvAllocation } from "./types";

/** vLLM's max_num_batched_tokens default for the API server on GPUs with ≥70 GiB (arg_utils.py get_batch_defaults). */
export const DEFAULT_MAX_BATCHED_TOKENS = 8192;

/**
 * How an engine takes KV blocks when its config does not say: "incremental", step by step with
 * preemption, because that is what vLLM V1 does (vllm/v1/core/sched/scheduler.py Scheduler.schedule and
 * _preempt_request; vllm/v1/core/kv_cache_manager.py allocate_slots and free; scheduler.ts has the
 * details). "reserve" (prompt + output at admission, never a preemption) was the default before: no
 * vLLM release allocates that way, and it held a request's whole output from its first step, which
 * stretched the tails of routers that pile load and fed kvUsage readers blocks not yet written.
 */
export const DEFAULT_KV_ALLOCATION: KvAllocation = "incremental";

/**
 * A --kv-allocation flag's text (bench:sim and its kin, the emulator) as a KvAllocation: DEFAULT_KV_ALLOCATION
 * when absent, a RangeError naming the choices when it is none of them.
 */
export function kvAllocationFlag(raw: string | undefined): KvAllocation {
  if (raw === undefined) return DEFAULT_KV_ALLOCATION;
  const found = KV_ALLOCATIONS.find((a) => a === raw);
  if (found === undefined)
    throw new RangeError(`--kv-allocation must be one of ${KV_ALLOCATIONS.join(", ")}, got "${raw}"`);
  return found;
}

/** The KV allocation an engine of this config runs: its own, or DEFAULT_KV_ALLOCATION. */
export function kvAllocationOf(c: Pick<EngineConfig, "kvAllocation">): KvAllocation {
  return c.kvAllocation ?? DEFAULT_KV_ALLOCATION;
}

/** The step token budget of a config (max_num_batched_tokens). */
export function stepBudget(c: EngineConfig): number {
  return c.maxBatchedTokens ?? DEFAULT_MAX_BATCHED_TOKENS;
}

export function validateConfig(c: EngineConfig): void {
  const positiveInt = (name: string, v: number | undefined): void => {
    if (v !== undefined && (!Number.isInteger(v) || v < 1))
      throw new RangeError(`EngineConfig.${name} must be a positive integer, got ${v}`);
  };
  const nonNegative = (name: string, v: number | undefined): void => {
    if (v !== undefined && !(Number.isFinite(v) && v >= 0))
      throw new RangeError(`EngineConfig.${name} must be a finite number ≥ 0, got ${v}`);
  };
  positiveInt("blockTokens", c.blockTokens);
  if (c.kvAllocation !== undefined && !KV_ALLOCATIONS.includes(c.kvAllocation))
    throw new RangeError(
      `EngineConfig.kvAllocation must be one of ${KV_ALLOCATIONS.join(", ")}, got ${c.kvAllocation}`,
    );
  if (!Number.isInteger(c.maxModelLen) || c.maxModelLen < 1)
    throw new RangeError(`EngineConfig.maxModelLen must be a positive integer, got ${c.maxModelLen}`);
  positiveInt("maxRunning", c.maxRunning);
  positiveInt("maxBatchedTokens", c.maxBatchedTokens);
  // vLLM refuses the same (SchedulerConfig.verify_max_model_len): every running decode must fit one step.
  if (stepBudget(c) < c.maxRunning)
    throw new RangeError(
      `EngineConfig.maxBatchedTokens (${stepBudget(c)}) must be ≥ maxRunning (${c.maxRunning}): every running sequence needs a token of each step`,
    );
  if (!Number.isFinite(c.kvCacheTokens) || c.kvCacheTokens < c.blockTokens)
    throw new RangeError(`EngineConfig.kvCacheTokens must hold at least one block, got ${c.kvCacheTokens}`);
  if (!(Number.isFinite(c.prefillTokensPerSec) && c.prefillTokensPerSec > 0))
    throw new RangeError(`EngineConfig.prefillTokensPerSec must be > 0, got ${c.prefillTokensPerSec}`);
  nonNegative("decodeStepBaseMs", c.decodeStepBaseMs);
  nonNegative("decodeStepPerSeqMs", c.decodeStepPerSeqMs);
  nonNegative("decodeStepPerKTokenMs", c.decodeStepPerKTokenMs);
  nonNegative("expertWeightsMs", c.expertWeightsMs);
  if (
    (c.expertWeightsMs ?? 0) > 0 &&
    !(c.expertShare !== undefined && c.expertShare > 0 && c.expertShare <= 1)
  )
    throw new RangeError(
      `EngineConfig.expertShare must be in (0, 1] with expertWeightsMs, got ${c.expertShare}`,
    );
  if (c.decodeStepBaseMs + c.decodeStepPerSeqMs <= 0)
    throw new RangeError(
      "EngineConfig: a decode step must take some time (decodeStepBaseMs + decodeStepPerSeqMs > 0)",
    );
}

/**
 * The longest sequence an engine of this config serves, as vLLM reports it (/v1/models max_model_len): its
 * maxModelLen, or the KV cache's whole blocks when they hold less (vLLM will not start with a max_model_len
 * its cache cannot hold; the operator lowers --max-model-len to fit, as --kv-tokens does here).
 */
export function servedModelLen(c: EngineConfig): number {
  return Math.min(c.maxModelLen, kvCapacityTokens(c));
}

/** The tokens the KV cache's whole blocks hold: the most one request's prompt + output can take. */
export function kvCapacityTokens(c: EngineConfig): number {
  return Math.floor(c.kvCacheTokens / c.blockTokens) * c.blockTokens;
}

/**
 * A request past the engine's max_model_len, as vLLM's OpenAI server refuses it (400: "This model's maximum
 * context length is N tokens. However, you requested ..."): an error naming the request, or undefined.
 */
export function contextOverflow(
  c: EngineConfig,
  id: string,
  promptTokens: number,
  outputTokens: number,
): string | undefined {
  const total = promptTokens + outputTokens;
  return total > c.maxModelLen
    ? `request ${id}: prompt ${promptTokens} + output ${outputTokens} = ${total} tokens, past the engine's max_model_len ${c.maxModelLen} (vLLM refuses it with a 400)`
    : undefined;
}
