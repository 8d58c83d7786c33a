/**
 * Parses and validates the OpenAI request fields the emulator honours. Fields
 * it does not model (temperature, top_p, seed as a sampling knob, tools, ...)
 * are accepted and ignored, as a permissive server would; wrong types of the
 * fields it uses are 400s naming the field.
 */
import { badRequest } from "./http-error";
import type { ChatMessageLike } from "./prompt-tokens";

/** max_tokens when the request gives none. vLLM's default is "the rest of the context"; a bench wants bounded answers. */
export const DEFAULT_MAX_TOKENS = 256;
/** Most choices per request (OpenAI's documented maximum for n is 128). */
export const MAX_N = 128;

export interface CommonParams {
  readonly model: string;
  /** Tokens each choice generates unless a stop string ends it first. */
  readonly maxTokens: number;
  /** How an answer that reaches maxTokens ends: its max_tokens cap, or the model's EOS at min_tokens. */
  readonly endReason: "length" | "stop";
  readonly n: number;
  readonly stop: readonly string[];
  readonly seed: number;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly cacheSalt: string | undefined;
}

export type PromptInput =
  | { readonly kind: "chat"; readonly messages: readonly ChatMessageLike[] }
  | { readonly kind: "text"; readonly prompts: readonly (string | readonly number[])[] };

type Json = Record<string, unknown>;

export function parseJsonBody(raw: string): Json {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw badRequest("We could not parse the JSON body of your request.");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw badRequest("The request body must be a JSON object.");
  return body as Json;
}

function optInt(body: Json, name: string, min: number, max: number): number | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max)
    throw badRequest(
      `'${name}' must be an integer between ${min} and ${max}, got ${JSON.stringify(v)}.`,
      name,
    );
  return v;
}

function optNumber(body: Json, name: string): void {
  const v = body[name];
  if (v !== undefined && v !== null && typeof v !== "number")
    throw badRequest(`'${name}' must be a number.`, name);
}

/**
 * How long an answer is. The emulated model has no end of its own: without
 * min_tokens it writes until max_tokens (256 when absent), like vLLM with
 * ignore_eos. With vLLM's min_tokens (no EOS before that many tokens) it
 * emits EOS at the first position min_tokens allows, so min_tokens is the
 * answer's natural length and max_tokens only a cap: the e2e replay sends
 * the true length there and max_tokens as clients would. As in vLLM,
 * min_tokens above max_tokens is an error, and min_tokens 0 constrains nothing.
 */
function answerLength(
  cap: number | undefined,
  minTokens: number | undefined,
): { maxTokens: number; endReason: "length" | "stop" } {
  if (minTokens !== undefined && cap !== undefined && minTokens > cap)
    throw badRequest(`'min_tokens' must be at most max_tokens (${cap}), got ${minTokens}.`, "min_tokens");
  if (minTokens !== undefined && minTokens > 0 && (cap === undefined || minTokens < cap))
    return { maxTokens: minTokens, endReason: "stop" };
  return { maxTokens: cap ?? DEFAULT_MAX_TOKENS, endReason: "length" };
}

export function parseCommon(body: Json): CommonParams {
  const model = body.model;
  if (typeof model !== "string" || model === "")
    throw badRequest("you must provide a model parameter", "model");
  optNumber(body, "temperature");
  optNumber(body, "top_p");
  const cap = optInt(body, "max_completion_tokens", 1, 1_000_000) ?? optInt(body, "max_tokens", 1, 1_000_000);
  const { maxTokens, endReason } = answerLength(cap, optInt(body, "min_tokens", 0, 1_000_000));
  const n = optInt(body, "n", 1, MAX_N) ?? 1;
  const seed = optInt(body, "seed", Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER) ?? 0;
  let stop: string[] = [];
  const s = body.stop;
  if (typeof s === "string") stop = [s];
  else if (Array.isArray(s) && s.every((x) => typeof x === "string")) stop = s as string[];
  else if (s !== undefined && s !== null)
    throw badRequest("'stop' must be a string or an array of strings.", "stop");
  const stream = body.stream === true;
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== "boolean")
    throw badRequest("'stream' must be a boolean.", "stream");
  const so = body.stream_options;
  let includeUsage = false;
  if (so !== undefined && so !== null) {
    if (typeof so !== "object" || Array.isArray(so))
      throw badRequest("'stream_options' must be an object.", "stream_options");
    includeUsage = (so as Json).include_usage === true;
  }
  const salt = body.cache_salt;
  if (salt !== undefined && salt !== null && typeof salt !== "string")
    throw badRequest("'cache_salt' must be a string.", "cache_salt");
  return {
    model,
    maxTokens,
    endReason,
    n,
    stop,
    seed,
    stream,
    includeUsage,
    cacheSalt: typeof salt === "string" && salt !== "" ? salt : undefined,
  };
}

/** Text of a message's content: a string, or the text of its text parts (other parts carry no text here). */
function contentText(content: unknown, i: number): string | null {
  if (content === undefined || content === null) return null;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    let text = "";
    for (const part of content) {
      if (typeof part !== "object" || part === null)
        throw badRequest(`messages[${i}].content parts must be objects.`, `messages[${i}].content`);
      const p = part as Json;
      if (p.type === "text") {
        if (typeof p.text !== "string")
          throw badRequest(
            `messages[${i}].content text parts need a string 'text'.`,
            `messages[${i}].content`,
          );
        text += p.text;
      }
    }
    return text;
  }
  throw badRequest(`messages[${i}].content must be a string or an array of parts.`, `messages[${i}].content`);
}

export function parseChatPrompt(body: Json): PromptInput {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0)
    throw badRequest("'messages' must be a non-empty array.", "messages");
  const out: ChatMessageLike[] = messages.map((m: unknown, i) => {
    if (typeof m !== "object" || m === null)
      throw badRequest(`messages[${i}] must be an object.`, `messages[${i}]`);
    const msg = m as Json;
    if (typeof msg.role !== "string" || msg.role === "")
      throw badRequest(`messages[${i}].role must be a string.`, `messages[${i}].role`);
    let content = contentText(msg.content, i);
    // An assistant turn that only called tools still occupies context.
    if (content === null && msg.tool_calls !== undefined) content = JSON.stringify(msg.tool_calls);
    return { role: msg.role, content };
  });
  return { kind: "chat", messages: out };
}

function isTokenArray(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((x) => typeof x === "number" && Number.isInteger(x) && x >= 0);
}

/** `prompt`: a string, an array of token ids, or a batch (array of strings or of token arrays). */
export function parseCompletionPrompt(body: Json): PromptInput {
  const p = body.prompt;
  if (typeof p === "string") return { kind: "text", prompts: [p] };
  if (Array.isArray(p) && p.length > 0) {
    if (isTokenArray(p)) return { kind: "text", prompts: [p] };
    if (p.every((x) => typeof x === "string" || isTokenArray(x)))
      return { kind: "text", prompts: p as (string | number[])[] };
  }
  throw badRequest(
    "'prompt' must be a string, an array of token ids, or a non-empty array of those.",
    "prompt",
  );
}
