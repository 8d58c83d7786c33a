/**
 * Contract of the backend model: one inference engine instance as vLLM V1
 * behaves (paged KV cache of 16-token blocks, prefix caching of full blocks
 * from the step that schedules them, LRU eviction of unpinned blocks,
 * running-request limit, FCFS waiting queue admitted within each step's
 * token budget, chunked prefill, decode step time growing with the batch).
 *
 * Event-driven and clock-free: the caller owns time. The simulator drives it
 * with virtual time; the emulator with the wall clock (setTimeout to
 * nextEventTime()). Both use this one implementation. At one instant,
 * submit, abort and the readers come before the step boundary due then:
 * advance(now) runs it, so requests submitted at one instant share a step.
 */

export interface EngineConfig {
  /** KV-cache capacity in tokens (all blocks, running and cached). */
  readonly kvCacheTokens: number;
  /** Tokens per KV block (vLLM default 16). Only full blocks are reusable. */
  readonly blockTokens: number;
  /**
   * The longest sequence, prompt + output, the engine serves (vLLM max_model_len: --max-model-len, else the
   * model config's max_position_embeddings, scaled by rope_scaling when the model is served with it). vLLM
   * refuses a request past it with a 400, and a request with no max_tokens may generate up to it. A positive
   * integer; every request a workload sends must fit it (simulator.ts checks, validateConfig bounds it).
   */
  readonly maxModelLen: number;
  /** Maximum running (batched) requests (vLLM max_num_seqs). */
  readonly maxRunning: number;
  /** Prefill throughput of the instance, tokens/s: a step's prefill chunks take their tokens ÷ this. */
  readonly prefillTokensPerSec: number;
  /** Decode step time at batch size 1, ms. */
  readonly decodeStepBaseMs: number;
  /** Added decode step time per running sequence, ms. */
  readonly decodeStepPerSeqMs: number;
  /**
   * Token budget of one engine step (vLLM max_num_batched_tokens; chunked
   * prefill). Decoding sequences take one token each; prefill chunks fill the
   * rest, and waiting requests are admitted only while some is left. At least
   * maxRunning. Absent: 8192, vLLM's default for the API server on H100-class GPUs.
   */
  readonly maxBatchedTokens?: number;
  /**
   * Added decode step time per 1,000 tokens of context held by the decoding
   * sequences (attention reads every cached K/V once per step), ms. Absent: 0.
   */
  readonly decodeStepPerKTokenMs?: number;
  /**
   * Mixture-of-experts models: ms to read every routed expert's weights once.
   * A step reads the experts its tokens are routed to, expertWeightsMs × (1 −
   * (1 − expertShare)^tokens in the step), on top of decodeStepBaseMs (the
   * weights every step reads). Absent: 0, a dense model.
   */
  readonly expertWeightsMs?: number;
  /** Experts a token is routed to ÷ routed experts per layer (top-k ÷ E); with expertWeightsMs. */
  readonly expertShare?: number;
  /**
   * How a request takes KV blocks. "incremental" (absent: DEFAULT_KV_ALLOCATION,
   * engine-config.ts): as vLLM V1 does (KVCacheManager.allocate_slots for the
   * tokens of each step), with preemption by recompute when a running request
   * cannot grow (scheduler.ts). "reserve": prompt + output at admission, so
   * nothing is ever preempted (the default before; kept to reproduce older reports).
   */
  readonly kvAllocation?: KvAllocation;
}

export type KvAllocation = "reserve" | "incremental";
export const KV_ALLOCATIONS: readonly KvAllocation[] = ["reserve", "incremental"];

export interface EngineRequest {
  readonly id: string;
  /**
   * Keys of the prompt's full blocks (blockTokens each), chained (a key
   * identifies the whole prefix up to that block), in order.
   */
  readonly blocks: readonly number[];
  readonly promptTokens: number;
  readonly outputTokens: number;
}

export type EngineEvent =
  | {
      readonly kind: "first_token";
      readonly id: string;
      readonly time: number;
      readonly cachedTokens: number;
    }
  | {
      readonly kind: "done";
      readonly id: string;
      readonly time: number;
      readonly cachedTokens: number;
      readonly outputTokens: number;
    };

export interface EngineMetrics {
  readonly running: number;
  readonly waiting: number;
  /**
   * Fraction of KV blocks referenced by running requests, 0..1, as vLLM
   * reports vllm:kv_cache_usage_perc (1 - free/total, where cached blocks no
   * request uses count as free: they are evictable on demand).
   */
  readonly kvUsage: number;
  /** Cumulative prompt tokens looked up in the prefix cache (vllm:prefix_cache_queries). */
  readonly prefixQueryTokens: number;
  /** Cumulative prompt tokens found there (vllm:prefix_cache_hits). */
  readonly prefixHitTokens: number;
  readonly promptTokensTotal: number;
  readonly generationTokensTotal: number;
  readonly requestsFinished: number;
  /** Cumulative seconds spent on prefill compute (GPU-seconds of prefill). */
  readonly prefillSeconds: number;
  /** Cumulative preemptions (vllm:num_preemptions); always 0 under kvAllocation "reserve". */
  readonly preemptions: number;
}
