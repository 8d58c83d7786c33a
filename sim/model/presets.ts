/**
 * Named engine configurations. Every figure says where it comes from; where a
 * figure is derived rather than measured, the derivation is spelled out so it
 * can be redone for other hardware.
 *
 * Sources:
 * [L8]  meta-llama/Llama-3.1-8B-Instruct config.json: num_hidden_layers 32,
 *       num_key_value_heads 8, hidden_size 4096 / num_attention_heads 32 →
 *       head_dim 128; 8.03e9 parameters (model card); max_position_embeddings
 *       131,072 (rope_scaling "llama3" is already in it: the 128k context).
 * [L70] meta-llama/Llama-3.1-70B-Instruct config.json: num_hidden_layers 80,
 *       num_key_value_heads 8, head_dim 128; 70.6e9 parameters;
 *       max_position_embeddings 131,072, as the 8B.
 * [ML]  vLLM's max_model_len (ModelConfig, _get_and_verify_max_len): the
 *       config's max_position_embeddings; with YaRN rope_scaling,
 *       original_max_position_embeddings × factor; --max-model-len, when
 *       given, must not exceed that. vLLM also refuses to start when one
 *       max_model_len sequence does not fit the KV cache.
 * [H100] NVIDIA H100 SXM5 datasheet: 80 GB HBM3, 3.35 TB/s, 989 TFLOPS dense
 *       BF16. The CUDA driver reports 79.1 GiB usable.
 * [VD]  vLLM engine defaults: gpu_memory_utilization 0.9; block_size 16;
 *       on GPUs with ≥70 GiB (not A100) the API server defaults to
 *       max_num_seqs 1024 and max_num_batched_tokens 8192
 *       (vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults).
 * [Q3]  Qwen/Qwen3-30B-A3B config.json: num_hidden_layers 48, hidden_size
 *       2048, num_attention_heads 32, num_key_value_heads 4, head_dim 128,
 *       num_experts 128, num_experts_per_tok 8, moe_intermediate_size 768,
 *       vocab_size 151,936, tie_word_embeddings false, max_position_embeddings
 *       40,960 (no rope_scaling); model card: 30.5e9 parameters, 3.3e9
 *       activated per token, 32,768 tokens of context natively and 131,072
 *       with YaRN, served as `vllm serve ... --rope-scaling
 *       '{"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768}'
 *       --max-model-len 131072`.
 * [MFU] Prefill of dense 8B–70B models on H100 under vLLM reaches roughly
 *       40–50% of peak BF16 FLOPS; decode is memory-bound and reaches roughly
 *       70% of peak HBM bandwidth. We use 40% and 70% (conservative ends).
 * [AR]  TP all-reduce of one decode step's activations is latency-bound on
 *       NVLink: two all-reduces per layer of a few hundred KB each, ~10–15 µs
 *       apiece for small messages (NCCL on 4 × H100 NVLink).
 *
 * The balance of each preset, from its figures (decode step at 32 running
 * sequences with 2k tokens of context each; prefill per 1,000 uncached
 * tokens; KV capacity):
 *
 *   preset                      decode step   prefill / 1k tok   step ÷ prefill/tok   KV tokens
 *   llama-3.1-8b-h100-vllm        11.1 ms        50 ms             222 tokens          442k
 *   llama-3.1-70b-4xh100-vllm     20.2 ms       100 ms             202 tokens          469k
 *   qwen3-30b-a3b-h100-vllm       25.9 ms        28 ms             934 tokens          132k
 *
 * The 70B is the 8B slowed down about twice, with the same balance; the MoE
 * is decode-heavy (a decode step costs what ~930 prompt tokens of prefill
 * cost, 4× the dense models) and holds a third of the KV: a cache miss costs
 * little, queueing behind decodes and eviction cost more.
 */
import { validateConfig } from "./engine-config";
import type { EngineConfig } from "./types";

/** KV bytes per token: K and V (2) × layers × kv_heads × head_dim × 2 bytes (BF16). */
export function kvBytesPerToken(layers: number, kvHeads: number, headDim: number, bytesPerElem = 2): number {
  return 2 * layers * kvHeads * headDim * bytesPerElem;
}

const GIB = 1024 ** 3;

/**
 * Llama-3.1-8B-Instruct, BF16, one H100 80GB, vLLM V1 defaults.
 *
 * - KV per token [L8]: 2 × 32 × 8 × 128 × 2 = 131,072 B (128 KiB).
 * - KV memory [H100][VD]: 0.9 × 79.1 GiB = 71.2 GiB budget; minus weights
 *   8.03e9 × 2 B = 14.96 GiB; minus ~2.2 GiB for activations at an 8192-token
 *   step and CUDA graphs → ~54 GiB → 54 GiB / 128 KiB ≈ 442k tokens. We use
 *   442,368 (27,648 blocks of 16).
 * - Prefill [L8][H100][MFU]: 2 × 8.03e9 = 16.1 GFLOP per token for the
 *   matmuls, plus attention 4 × 32 layers × 4096 × (context/2) ≈ 3.1 GFLOP at
 *   a 12k-token context; 0.40 × 989 TFLOPS / 19.2 GFLOP ≈ 20,600 tokens/s.
 *   We use 20,000.
 * - Decode step [H100][MFU]: reading the 16.06 GB of weights at 0.7 × 3.35
 *   TB/s takes 6.85 ms → base 6.9 ms (measured vLLM TPOT at batch 1 on H100
 *   is ~6–7 ms). Each 1,000 tokens of context add 1000 × 131,072 B / 2.35 TB/s
 *   = 0.056 ms per step; each sequence adds ~0.02 ms of sampling and
 *   bookkeeping.
 * - max_model_len [L8][ML]: 131,072, the config's own (no --max-model-len);
 *   the 442k-token cache holds three such sequences.
 */
export const LLAMA_3_1_8B_H100_VLLM: EngineConfig = {
  maxModelLen: 131_072,
  kvCacheTokens: 442_368,
  blockTokens: 16,
  maxRunning: 1024,
  prefillTokensPerSec: 20_000,
  decodeStepBaseMs: 6.9,
  decodeStepPerSeqMs: 0.02,
  decodeStepPerKTokenMs: 0.056,
  maxBatchedTokens: 8192,
};

/**
 * Llama-3.1-70B-Instruct, BF16, 4 × H100 80GB with tensor parallelism 4,
 * vLLM V1 defaults (the model in AWS's SageMaker prefix-routing figures).
 *
 * - KV per token [L70]: 2 × 80 × 8 × 128 × 2 = 327,680 B (320 KiB), split
 *   across the 4 GPUs.
 * - KV memory: 4 × 0.9 × 79.1 GiB = 284.8 GiB; minus weights 70.6e9 × 2 B =
 *   131.5 GiB; minus ~4 × 2.5 GiB activations/graphs → ~143 GiB / 320 KiB ≈
 *   469k tokens. We use 468,992 (29,312 blocks).
 * - Prefill: 2 × 70.6e9 = 141 GFLOP per token plus attention 4 × 80 × 8192 ×
 *   6k ≈ 15.7 GFLOP at a 12k context; 0.40 × 4 × 989 TFLOPS / 157 GFLOP ≈
 *   10,100 tokens/s. We use 10,000.
 * - Decode step: 141 GB of weights at 0.7 × 4 × 3.35 TB/s = 15.0 ms, plus
 *   ~2 ms of all-reduce per step across TP4 [AR] (160 all-reduces × ~12 µs)
 *   → 17 ms. 1,000 tokens of context add 1000 × 327,680 B / 9.38 TB/s =
 *   0.035 ms per step.
 * - max_model_len [L70][ML]: 131,072, the config's own.
 */
export const LLAMA_3_1_70B_4XH100_VLLM: EngineConfig = {
  maxModelLen: 131_072,
  kvCacheTokens: 468_992,
  blockTokens: 16,
  maxRunning: 1024,
  prefillTokensPerSec: 10_000,
  decodeStepBaseMs: 17,
  decodeStepPerSeqMs: 0.03,
  decodeStepPerKTokenMs: 0.035,
  maxBatchedTokens: 8192,
};

/**
 * Qwen3-30B-A3B, a mixture of experts, BF16 on one H100 80GB, vLLM V1
 * defaults, YaRN on for 131k tokens of context [Q3]: the decode-heavy preset.
 *
 * Parameters [Q3]: routed experts 48 × 128 × 3 × 2048 × 768 = 28.99e9;
 * attention 48 × (2048 × 4096 q + 2 × 2048 × 512 k, v + 4096 × 2048 o) =
 * 0.906e9; routers 48 × 2048 × 128 = 0.013e9; embedding and LM head 2 ×
 * 151,936 × 2048 = 0.622e9; total 30.53e9 (the card's 30.5e9).
 * - KV per token [Q3]: 2 × 48 × 4 × 128 × 2 = 98,304 B (96 KiB).
 * - KV memory [H100][VD]: 71.2 GiB budget; minus weights 30.53e9 × 2 B =
 *   56.9 GiB; minus ~2.2 GiB activations and CUDA graphs (as for the 8B) →
 *   12.1 GiB / 96 KiB ≈ 132k tokens. We use 132,096 (8,256 blocks of 16;
 *   258 of Mooncake's 512), which holds the longest Mooncake request (126.5k).
 * - Prefill [Q3][H100][MFU]: per token 2 × (8/128 × 28.99e9 experts + 0.906e9
 *   attention + 0.013e9 routers + 0.311e9 LM head) = 6.1 GFLOP, plus
 *   attention 4 × 48 layers × 4096 × 6k = 4.7 GFLOP at a 12k context;
 *   0.40 × 989 TFLOPS / 10.8 GFLOP ≈ 36,600 tokens/s. We use 36,000 (grouped
 *   expert GEMMs may reach less than dense ones: the optimistic end).
 * - Decode step [H100][MFU]: every step reads the weights outside the
 *   experts, (0.906 + 0.013 + 0.311)e9 × 2 B = 2.46 GB at 2.35 TB/s = 1.05 ms
 *   (base), and the experts its tokens are routed to: all of them would be
 *   28.99e9 × 2 B = 58.0 GB → 24.7 ms; with 8 of 128 per token and uniform
 *   routing a step of n tokens touches 1 − (15/16)^n of them (6% at 1, 64% at
 *   16, 98% at 64, all of them in any prefill chunk). 1,000 tokens of
 *   context add 1000 × 98,304 B / 2.35 TB/s = 0.042 ms; each sequence adds
 *   ~0.02 ms of sampling and bookkeeping, as for the 8B. The base is the
 *   bandwidth floor: kernel-launch and routing overheads, which weigh most
 *   at small batches, are not in it.
 * - max_model_len [Q3][ML]: 131,072, as the card serves it with YaRN (factor
 *   4 over 32,768; --max-model-len 131072): this preset models that
 *   deployment (its KV was sized to hold the longest Mooncake request,
 *   126.5k, which the native 40,960 would refuse). Without YaRN vLLM would
 *   take the config's 40,960. The 132,096-token cache holds one 131,072-token
 *   sequence, so vLLM starts (1,024 tokens to spare).
 */
export const QWEN3_30B_A3B_H100_VLLM: EngineConfig = {
  maxModelLen: 131_072,
  kvCacheTokens: 132_096,
  blockTokens: 16,
  maxRunning: 1024,
  prefillTokensPerSec: 36_000,
  decodeStepBaseMs: 1.05,
  decodeStepPerSeqMs: 0.02,
  decodeStepPerKTokenMs: 0.042,
  expertWeightsMs: 24.7,
  expertShare: 8 / 128,
  maxBatchedTokens: 8192,
};

/** The default backend: one Llama-3.1-8B replica on one H100 under vLLM. */
export const DEFAULT_ENGINE_CONFIG: EngineConfig = LLAMA_3_1_8B_H100_VLLM;

export const ENGINE_PRESETS: Readonly<Record<string, EngineConfig>> = {
  "llama-3.1-8b-h100-vllm": LLAMA_3_1_8B_H100_VLLM,
  "llama-3.1-70b-4xh100-vllm": LLAMA_3_1_70B_4XH100_VLLM,
  "qwen3-30b-a3b-h100-vllm": QWEN3_30B_A3B_H100_VLLM,
};

/** The name of DEFAULT_ENGINE_CONFIG in ENGINE_PRESETS. */
export const DEFAULT_PRESET = "llama-3.1-8b-h100-vllm";

/**
 * A preset by name, checked (validateConfig: a bad figure, e.g. a maxModelLen that is no positive integer,
 * fails here, naming the preset); an unknown name is an error that lists the known ones.
 */
export function enginePreset(
  name: string,
  presets: Readonly<Record<string, EngineConfig>> = ENGINE_PRESETS,
): EngineConfig {
  const preset = presets[name];
  if (preset === undefined)
    throw new RangeError(`unknown engine preset "${name}": use ${Object.keys(presets).join(", ")}`);
  try {
    validateConfig(preset);
  } catch (e) {
    throw new RangeError(`engine preset "${name}": ${e instanceof Error ? e.message : String(e)}`);
  }
  return preset;
}

/** Usable KV memory of the 8B preset, in GiB, recomputed from the figures above (kept for tests/docs). */
export const LLAMA_3_1_8B_H100_KV_GIB = (442_368 * kvBytesPerToken(32, 8, 128)) / GIB;
