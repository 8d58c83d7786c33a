/**
 * OpenAI request logs, one JSON object a line:
 *   {"timestamp": T, "model": "...", "messages": [...] | "prompt": "...", "max_tokens": n}
 *
 * Timestamp rules (documented in the CLI help too):
 * - ISO-8601 string → parsed;
 * - number ≥ 1e11 → Unix epoch milliseconds;
 * - number in [1e8, 1e11) → Unix epoch seconds (fractions allowed);
 * - number < 1e8 → milliseconds from the start of the log (as in the Mooncake trace).
 * Arrivals are then made relative to the earliest request of the file.
 *
 * The prompt is tokenized with o200k_base by the gateway's own tokenizer (src/prefix/tokenizer.ts: js-tiktoken's ids, in linear time). Canonical text, the
 * same idea the gateway hashes: per message, role + "\n" + content + "\n"
 * (content parts of type text joined), messages in order; a `prompt` string
 * (or array of strings) stands alone. Each message's tokens are memoized: chat
 * logs repeat the same system prompt and history thousands of times.
 * `prompt_cache_key` (or `user` when absent) becomes the tenant; output
 * tokens = max_completion_tokens ?? max_tokens ?? 256 (a log records what
 * was asked, not what was generated), and the router is told exactly what
 * the client sent (sentMaxTokens, null when it sent none).
 */
import type { Tiktoken } from "js-tiktoken/lite";
import { o200kTokenizer } from "../../src/prefix/tokenizer";
import { DEFAULT_BLOCK_TOKENS } from "./segments";
import type { WorkloadRequest } from "./types";

export const OPENAI_LOG_BLOCK_TOKENS = DEFAULT_BLOCK_TOKENS;
export const DEFAULT_OUTPUT_TOKENS = 256;

let encoder: Tiktoken | undefined;
/** Loads o200k_base once, on first use (the ranks are several MB; Mooncake-only runs never pay). */
export async function loadTokenizer(): Promise<Tiktoken> {
  if (encoder === undefined) {
    const [{ Tiktoken }, ranks] = await Promise.all([
      import("js-tiktoken/lite"),
      import("js-tiktoken/ranks/o200k_base"),
    ]);
    encoder = new Tiktoken(ranks.default);
  }
  return encoder;
}

/**
 * Token ids the memo holds at most (16 MiB of ids, plus their texts); past
 * it the memo starts over. A log's hot texts (system prompts, histories)
 * come back within a few lines and are memoized again at once, and a
 * million-line log cannot grow it without bound.
 */
const MEMO_MAX_TOKENS = 1 << 22;
const memo = new Map<string, Uint32Array>();
let memoTokens = 0;
function encodeMemo(text: string): Uint32Array {
  let t = memo.get(text);
  if (t === undefined) {
    // The gateway's own tokenizer: the ids it keys (js-tiktoken's for ordinary text, special-token text
    // as plain text), in time linear in the text. js-tiktoken's merge is quadratic in a piece's length:
    // one 20,000-letter run took analyze 92 s, a 100 KB one past 2 minutes.
    t = Uint32Array.from(o200kTokenizer().encode(text).tokens);
    if (memoTokens + t.length > MEMO_MAX_TOKENS) {
      memo.clear();
      memoTokens = 0;
    }
    memo.set(text, t);
    memoTokens += t.length;
  }
  return t;
}

export function looksLikeOpenAI(o: Record<string, unknown>): boolean {
  return "messages" in o || "prompt" in o;
}

/** Parses a timestamp by the rules above into absolute-or-relative ms; null when invalid. */
export function timestampMs(v: unknown): number | null {
  if (typeof v === "string") {
    const t = Date.parse(v);
    return Number.isFinite(t) ? t : null;
  }
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) return null;
  if (v >= 1e11) return v;
  if (v >= 1e8) return v * 1000;
  return v;
}

function contentText(content: unknown): string | null {
  if (typeof content === "string") return content;
  if (content === null || content === undefined) return "";
  if (!Array.isArray(content)) return null;
  const parts: string[] = [];
  for (const p of content) {
    if (typeof p === "string") parts.push(p);
    else if (p !== null && typeof p === "object" && typeof (p as { text?: unknown }).text === "string")
      parts.push((p as { text: string }).text);
  }
  return parts.join("");
}

/** Canonical text pieces of a request (one per message), or a reason it is malformed. */
export function canonicalPieces(o: Record<string, unknown>): string[] | string {
  if ("messages" in o) {
    if (!Array.isArray(o.messages) || o.messages.length === 0) return "messages must be a non-empty array";
    const pieces: string[] = [];
    for (const m of o.messages) {
      if (m === null || typeof m !== "object") return "each message must be an object";
      const { role, content } = m as { role?: unknown; content?: unknown };
      if (typeof role !== "string") return "each message needs a string role";
      const text = contentText(content);
      if (text === null) return "message content must be a string or an array of parts";
      pieces.push(`${role}\n${text}\n`);
    }
    return pieces;
  }
  const p = o.prompt;
  if (typeof p === "string") return [p];
  if (Array.isArray(p) && p.every((s) => typeof s === "string")) return [(p as string[]).join("")];
  return "prompt must be a string or an array of strings";
}

/** A request from one parsed line (arrival not yet rebased), or a reason it is malformed. */
export function openAIRequest(o: Record<string, unknown>): WorkloadRequest | string {
  const arrival = timestampMs(o.timestamp);
  if (arrival === null) return "timestamp must be ms, seconds or an ISO-8601 string";
  if ("model" in o && typeof o.model !== "string") return "model must be a string";
  const maxTokens = o.max_completion_tokens ?? o.max_tokens;
  if (
    maxTokens !== undefined &&
    maxTokens !== null &&
    !(Number.isInteger(maxTokens) && Number(maxTokens) >= 0)
  )
    return "max_tokens must be a non-negative integer";
  const pieces = canonicalPieces(o);
  if (typeof pieces === "string") return pieces;
  const encoded = pieces.map((p) => encodeMemo(p));
  const tokens = new Uint32Array(encoded.reduce((n, e) => n + e.length, 0));
  let at = 0;
  for (const e of encoded) {
    tokens.set(e, at);
    at += e.length;
  }
  if (tokens.length === 0) return "empty prompt";
  const tenantRaw = o.prompt_cache_key ?? o.user;
  return {
    arrivalMs: arrival,
    promptTokens: tokens.length,
    outputTokens: typeof maxTokens === "number" ? maxTokens : DEFAULT_OUTPUT_TOKENS,
    sentMaxTokens: typeof maxTokens === "number" ? maxTokens : null,
    ...(typeof o.model === "string" ? { model: o.model } : {}),
    ...(typeof tenantRaw === "string" && tenantRaw !== "" ? { tenant: tenantRaw } : {}),
    prompt: { kind: "tokens", tokens, text: pieces.join("") },
  };
}
