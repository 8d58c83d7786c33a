/**
 * Which A/B arm a request belongs to, as a uint32 the RouterDO maps onto the
 * split (src/routing/pool-router.ts armOf). A conversation must never flip
 * arms, so the key is what every turn of one conversation repeats and
 * different conversations rarely share:
 * - chat: the first user message (every later turn resends it, after the
 *   same system prompt; a shared system prompt alone would put every
 *   conversation in one arm), with the model and tenant;
 * - completions: the prompt's first characters (a growing transcript keeps them);
 * - AB_STICKY=tenant: the tenant key (prompt_cache_key / x-prefix-cache-key)
 *   when the request has one, so a tenant's traffic stays in one arm.
 * Only the first and last KEY_CHARS characters (and the length) of a message
 * are hashed: the work per request stays bounded whatever the prompt.
 */
import { hashString } from "../../routing/hash";
import type { ChatBody, CompletionsBody, InferenceBody, InferenceKind } from "../request/openai-schemas";

/** Characters hashed from each end of the identifying text. */
export const KEY_CHARS = 2048;

const SALT = 0x0ab0ab;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let out = "";
  for (const part of content as unknown[]) {
    const text = (part as { text?: unknown } | null)?.text;
    if (typeof text === "string") out += text;
    if (out.length > 2 * KEY_CHARS) break;
  }
  return out;
}

/** The ends and length of a text: bounded work, and still telling different messages apart. */
function bounded(text: string): string {
  if (text.length <= 2 * KEY_CHARS) return text;
  return `${text.slice(0, KEY_CHARS)}\u0000${text.length}\u0000${text.slice(-KEY_CHARS)}`;
}

function conversationText(kind: InferenceKind, body: InferenceBody): string {
  if (kind === "chat") {
    const first = (body as ChatBody).messages.find((m) => m.role === "user");
    return first === undefined ? "" : bounded(textOf(first.content));
  }
  const prompt = (body as CompletionsBody).prompt;
  if (typeof prompt === "string") return prompt.slice(0, KEY_CHARS);
  // A batch is keyed by its first prompt; token ids by their first KEY_CHARS / 4.
  const first: unknown = prompt[0];
  if (typeof first === "string") return first.slice(0, KEY_CHARS);
  const ids = Array.isArray(first) ? first : prompt;
  return (ids as unknown[]).slice(0, KEY_CHARS / 4).join(",");
}

export function armKeyOf(
  kind: InferenceKind,
  body: InferenceBody,
  model: string,
  tenant: string | undefined,
  sticky: "conversation" | "tenant",
): number {
  const scope = `${model}\u0000${tenant ?? ""}`;
  if (sticky === "tenant" && tenant !== undefined) return hashString(scope, SALT);
  return hashString(`${scope}\u0000${conversationText(kind, body)}`, SALT);
}
