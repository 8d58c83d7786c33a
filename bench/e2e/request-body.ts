/**
 * The body the replay sends for one request, as a client would: max_tokens
 * is what the client chose (sim/client-max-tokens.ts; left out when it sends
 * none), never the answer's true length, so the gateway's router gets the
 * hint a real gateway gets. The true length travels as vLLM's `min_tokens`,
 * which the emulator ends the answer at (bench/emulator/openai-request.ts)
 * and the gateway passes through untouched, like any field it does not read.
 */

export interface ChatMessage {
  readonly role: "system" | "user" | "assistant";
  readonly content: string;
}

export interface ReplayRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  /** The answer's true length: what the emulated engine generates (at least 1). */
  readonly outputTokens: number;
  /** max_tokens as the client sends it; undefined: it sends none. */
  readonly maxTokens: number | undefined;
  readonly tenant?: string;
}

/** A streamed chat completion asking for usage, as JSON text. */
export function replayBody(r: ReplayRequest): string {
  const body: Record<string, unknown> = {
    model: r.model,
    messages: r.messages,
    ...(r.maxTokens !== undefined ? { max_tokens: r.maxTokens } : {}),
    min_tokens: Math.max(1, r.outputTokens),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (r.tenant !== undefined) body.prompt_cache_key = r.tenant;
  return JSON.stringify(body);
}
