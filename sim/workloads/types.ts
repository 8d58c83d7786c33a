/**
 * Contract of a workload request, shared by the simulator (sim/) and the
 * end-to-end replay (bench/e2e).
 *
 * A prompt is a list of segments. A segment is a run of tokens identified by a
 * key: two prompts that begin with the same segments share that prefix. The
 * simulator turns segments into pseudo token ids (deterministic from key and
 * offset) and then into block keys with the routing core; the e2e replay
 * turns them into text with the same tokens-per-word shape. Requests read
 * from an OpenAI JSONL log carry their real text and real token ids instead.
 */

export interface Segment {
  /** Identity of the content: equal keys mean equal tokens. */
  readonly key: string;
  readonly tokens: number;
}

export interface WorkloadRequest {
  /** Arrival time, ms from the start of the workload. */
  readonly arrivalMs: number;
  readonly promptTokens: number;
  /** Tokens the engine generates: the answer's true length. Routers never see it (sim/client-max-tokens.ts). */
  readonly outputTokens: number;
  /**
   * max_tokens as the client sent it, when the trace records the request as
   * sent (OpenAI logs): a number, or null when it sent none. Undefined when
   * the source records only what was generated (generators, Mooncake): the
   * simulator then models what a client would have sent.
   */
  readonly sentMaxTokens?: number | null;
  /**
   * The prompt's token count as the gateway computed it, when the source
   * records that (the gateway's own log lines). Otherwise the simulator
   * works out what the Worker would count (sim/request-view.ts).
   */
  readonly gatewayPromptTokens?: number;
  /** Model name (for multi-model logs); the simulator treats the fleet as one pool. */
  readonly model?: string;
  /** Tenant key (prompt_cache_key): isolates prefixes. */
  readonly tenant?: string;
  /** The prompt: segments (synthetic and Mooncake workloads), or real token ids (OpenAI logs). */
  readonly prompt:
    | { readonly kind: "segments"; readonly segments: readonly Segment[] }
    | { readonly kind: "tokens"; readonly tokens: Uint32Array; readonly text?: string };
}

export interface Workload {
  readonly name: string;
  /** Tokens per block natural to this workload (Mooncake: 512 per hash id; synthetic: 16). */
  readonly blockTokens: number;
  readonly requests: readonly WorkloadRequest[];
  /** Lines that could not be parsed (trace inputs); never fatal. */
  readonly malformed: number;
}
