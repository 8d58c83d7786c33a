/**
 * A generated workload written as an OpenAI request log, the format users
 * bring to `prefix-gateway analyze` and `simulate`: one chat request a line,
 * {"timestamp": ISO-8601, "model", "messages", "max_tokens"}.
 *
 * Segments become messages (segment-text.ts gives each segment's words, one
 * o200k token each, so equal segments are equal text): a one-segment prompt
 * is one user message; a longer one opens with a system message and
 * alternates user and assistant turns, which is multi-turn chat's shape
 * (system prompt, question, answer, …, question).
 */
import { segmentText } from "./segment-text";
import type { WorkloadRequest } from "./types";

/** Arrivals are written as times after this instant (an ISO string is never mistaken for seconds). */
export const LOG_EPOCH_MS = Date.UTC(2026, 0, 1);

export interface ChatMessage {
  readonly role: "system" | "user" | "assistant";
  readonly content: string;
}

export function segmentMessages(r: WorkloadRequest): ChatMessage[] {
  if (r.prompt.kind !== "segments") throw new Error("only segment workloads can be written as text");
  const segments = r.prompt.segments;
  if (segments.length === 1) return [{ role: "user", content: segmentText(segments[0]!) }];
  return segments.map((s, i) => ({
    role: i === 0 ? "system" : i % 2 === 1 ? "user" : "assistant",
    content: segmentText(s),
  }));
}

/** One log line (no trailing newline). */
export function openAILogLine(r: WorkloadRequest, model: string): string {
  return JSON.stringify({
    timestamp: new Date(LOG_EPOCH_MS + r.arrivalMs).toISOString(),
    model,
    messages: segmentMessages(r),
    max_tokens: r.outputTokens,
    ...(r.tenant !== undefined ? { prompt_cache_key: r.tenant } : {}),
  });
}
