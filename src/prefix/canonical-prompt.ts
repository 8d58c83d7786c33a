/**
 * The canonical prompt of an OpenAI request: an ordered stream of segments
 * (text to tokenize, structure markers, ready-made token ids) whose tokens,
 * concatenated, are what the prefix keys are computed over.
 *
 * It is not the backend's chat template (we do not know the model's, and
 * the backend's tokenizer is usually not o200k); it only has to be
 * deterministic, to change when anything the template would render changes,
 * and to be prefix-stable: a conversation extended by one turn keeps every
 * leading segment, so it keeps every leading block key.
 *
 * Structure (roles, names, tool calls, media) is expressed with marker ids
 * far outside any vocabulary (o200k ends at 200018), so no user text can
 * forge a role boundary. Each text segment is tokenized on its own, which
 * also keeps the tokens of one message independent of its neighbours.
 *
 * Bounded work: segments are written into a PromptSink as the request is
 * walked, never collected. Once the sink is closed (the keyed prefix is
 * full) the walk only measures: existing strings are passed as they are,
 * JSON values are measured without being rendered and media are not
 * fingerprinted, so a million content parts past the cap cost a loop, not
 * a million segments. While open, a JSON rendering stops at the sink's
 * `renderLimit`, past which the tokenizer could not read it anyway.
 */
import { fingerprint, fingerprintJson, renderStableJson, stableJsonLength } from "./canonical-json";
import { jsonRunExcessTokens, runExcessTokens } from "./run-excess";

/** Where the walk writes the canonical prompt, segment by segment. */
export interface PromptSink {
  /** False once nothing more can be keyed: the walk then only measures what follows. */
  readonly open: boolean;
  /** Characters of a JSON rendering that can still reach the tokenizer: renderings stop there. */
  readonly renderLimit: number;
  /** A text segment of `length` characters; `text` is all of it, or its start when a rendering was cut. */
  text(text: string, length?: number): void;
  /**
   * A text segment that is counted, never keyed, whether or not the sink is open (a /v1/completions batch's
   * later prompts: the engine prefills each, the keys follow only the first). Its text is read, not skipped,
   * so a run of one character in it is named as a keyed prompt's is (run-excess.ts).
   */
  counted(text: string): void;
  /**
   * Of the count so far, `tokens` that only the estimate claims (run-excess.ts), for text measured but not
   * read: the unrendered part of a JSON value.
   */
  unconfirmed(tokens: number): void;
  /** Marker or token ids; `extraTokens` is what the segment costs the engine beyond them (media). */
  ids(ids: readonly number[], extraTokens?: number): void;
}

/** One content part of a chat message (text, image_url, input_audio, file, ...); other fields pass through. */
export interface ContentPart {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** The fields of a chat message that shape the prompt; everything else is ignored. */
export interface ChatMessage {
  readonly role: string;
  readonly content?: string | readonly ContentPart[] | null;
  readonly name?: string | null;
  /** [{ id, type: "function", function: { name, arguments } }]; read defensively. */
  readonly tool_calls?: unknown;
  readonly tool_call_id?: unknown;
}

/** Minimal structural type of a validated /v1/chat/completions body. */
export interface ChatBody {
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly unknown[] | null;
}

/** Minimal structural type of a validated /v1/completions body. */
export interface CompletionsBody {
  readonly prompt: string | readonly string[] | readonly number[] | readonly (readonly number[])[];
}

const MARK = 0x7f000000;
export const MARKS = {
  roleSystem: MARK + 1,
  roleDeveloper: MARK + 2,
  roleUser: MARK + 3,
  roleAssistant: MARK + 4,
  roleTool: MARK + 5,
  roleFunction: MARK + 6,
  /** Followed by the role's name as text. */
  roleOther: MARK + 7,
  name: MARK + 8,
  toolCallId: MARK + 9,
  toolCall: MARK + 10,
  endMessage: MARK + 11,
  tools: MARK + 12,
  image: MARK + 13,
  audio: MARK + 14,
  video: MARK + 15,
  file: MARK + 16,
  otherPart: MARK + 17,
} as const;

const ROLE_MARKS: Readonly<Record<string, number>> = {
  system: MARKS.roleSystem,
  developer: MARKS.roleDeveloper,
  user: MARKS.roleUser,
  assistant: MARKS.roleAssistant,
  tool: MARKS.roleTool,
  function: MARKS.roleFunction,
};

/**
 * What one image costs the engine in prompt tokens, for the cost model only
 * (the keys hold a 2-word fingerprint). 765 is OpenAI's count for a
 * 1024×1024 high-detail image (85 base + 170 per 512-px tile); open VLMs are
 * in the same range (LLaVA-1.5: 576 patches at 336 px; Qwen2-VL: one token
 * per 28×28 px). Audio and video vary too much to guess: no extra.
 */
export const IMAGE_TOKENS_ESTIMATE = 765;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/**
 * One marker id per role, allocated once: the walk passes the same arrays for
 * every message. A Map, so that a role named "constructor" is just another role.
 */
const ROLE_IDS: ReadonlyMap<string, readonly number[]> = new Map(
  Object.entries(ROLE_MARKS).map(([role, mark]) => [role, [mark]]),
);
const ONE = (mark: number): readonly number[] => [mark];
const OTHER_ROLE_IDS = ONE(MARKS.roleOther);
const NAME_IDS = ONE(MARKS.name);
const TOOL_CALL_ID_IDS = ONE(MARKS.toolCallId);
const TOOL_CALL_IDS = ONE(MARKS.toolCall);
const END_IDS = ONE(MARKS.endMessage);
const TOOLS_IDS = ONE(MARKS.tools);
/** A media marker past the keyed prefix: counted (3 ids), never fingerprinted. */
const UNKEYED_MEDIA: readonly number[] = [0, 0, 0];

/** A media marker: the mark and a fingerprint of the source (a string, or any JSON value). */
function media(sink: PromptSink, mark: number, source: unknown, extraTokens = 0): void {
  if (!sink.open) {
    sink.ids(UNKEYED_MEDIA, extraTokens);
    return;
  }
  const fp = typeof source === "string" ? fingerprint(source) : fingerprintJson(source);
  sink.ids([mark, fp[0], fp[1]], extraTokens);
}

/** A JSON value as text: rendered (up to what the tokenizer can read) while keying, measured after. */
function json(sink: PromptSink, v: unknown): void {
  if (!sink.open) {
    sink.text("", stableJsonLength(v));
    sink.unconfirmed(jsonRunExcessTokens(v));
    return;
  }
  const r = renderStableJson(v, sink.renderLimit);
  sink.text(r.text, r.length);
  // The rendering stopped at the window's edge: the runs of the rest are the value's less the rendered part's.
  if (r.length > r.text.length)
    sink.unconfirmed(Math.max(0, jsonRunExcessTokens(v) - runExcessTokens(r.text)));
}

function part(p: ContentPart, sink: PromptSink): void {
  const field = p[p.type];
  switch (p.type) {
    case "text":
    case "input_text": {
      const text = str(p.text);
      if (text !== undefined) sink.text(text);
      return;
    }
    case "refusal": {
      const text = str(p.refusal);
      if (text !== undefined) sink.text(text);
      return;
    }
    case "image_url": {
      const url = isRecord(field) ? str(field.url) : str(field);
      media(sink, MARKS.image, url ?? field, IMAGE_TOKENS_ESTIMATE);
      return;
    }
    case "input_audio": {
      const data = isRecord(field) ? str(field.data) : undefined;
      media(sink, MARKS.audio, data ?? field);
      return;
    }
    case "video_url": {
      const url = isRecord(field) ? str(field.url) : str(field);
      media(sink, MARKS.video, url ?? field);
      return;
    }
    case "file": {
      const f = isRecord(field) ? field : {};
      media(sink, MARKS.file, str(f.file_id) ?? str(f.file_data) ?? f);
      return;
    }
    default:
      // Unknown part types still change the keys, by their whole content.
      media(sink, MARKS.otherPart, p);
      return;
  }
}

function toolCalls(calls: unknown, sink: PromptSink): void {
  if (!Array.isArray(calls)) return;
  for (const call of calls) {
    sink.ids(TOOL_CALL_IDS);
    const fn = isRecord(call) ? call.function : undefined;
    if (isRecord(fn)) {
      sink.text(str(fn.name) ?? "");
      // Arguments are a JSON string as the model produced it: kept verbatim, as templates render them.
      const args = fn.arguments;
      if (typeof args === "string") sink.text(args);
      else json(sink, args);
    } else {
      json(sink, call);
    }
  }
}

function message(m: ChatMessage, sink: PromptSink): void {
  const roleIds = ROLE_IDS.get(m.role);
  if (roleIds !== undefined) sink.ids(roleIds);
  else {
    sink.ids(OTHER_ROLE_IDS);
    sink.text(m.role);
  }
  if (typeof m.name === "string" && m.name !== "") {
    sink.ids(NAME_IDS);
    sink.text(m.name);
  }
  const toolCallId = str(m.tool_call_id);
  if (toolCallId !== undefined) {
    sink.ids(TOOL_CALL_ID_IDS);
    sink.text(toolCallId);
  }
  const content = m.content;
  if (typeof content === "string") sink.text(content);
  else if (Array.isArray(content)) for (const p of content) part(p, sink);
  toolCalls(m.tool_calls, sink);
  sink.ids(END_IDS);
}

/** One tool definition as JSON: function tools by name, description and parameters; others whole. */
function tool(t: unknown, sink: PromptSink): void {
  const fn = isRecord(t) && t.type === "function" ? t.function : undefined;
  if (isRecord(fn)) json(sink, { name: fn.name, description: fn.description, parameters: fn.parameters });
  else json(sink, t);
}

/**
 * Chat: leading system/developer messages, then the tool definitions, then
 * the rest of the conversation.
 *
 * Why tools there: the open-model chat templates served by vLLM/SGLang render
 * tools right after the system prompt — Qwen2.5/Qwen3 append "# Tools" inside
 * the system block after its content, Llama 3.1/3.3 put them in the first
 * user turn, after the system block. Either way the system prompt's KV stays
 * reusable across different tool sets while everything after the tools does
 * not, and our keys now say the same: same system prompt → shared leading
 * blocks; different tools → keys diverge from there on.
 */
export function writeChatPrompt(body: ChatBody, sink: PromptSink): void {
  const msgs = body.messages;
  let i = 0;
  for (; i < msgs.length; i++) {
    const m = msgs[i]!;
    if (m.role !== "system" && m.role !== "developer") break;
    message(m, sink);
  }
  const tools = body.tools;
  if (tools !== undefined && tools !== null && tools.length > 0) {
    sink.ids(TOOLS_IDS);
    for (const t of tools) tool(t, sink);
  }
  for (; i < msgs.length; i++) message(msgs[i]!, sink);
}

/** No ids: a count-only segment (PromptSink.ids with its extra tokens alone). */
const NO_IDS: readonly number[] = [];

/**
 * Completions: the prompt text, or its token ids as given. A batch (array of
 * several prompts) is keyed on its first prompt: one backend serves the
 * whole batch, and the first prompt is as good a representative as any. The
 * others are counted, never keyed: the engine prefills each as its own
 * sequence (vLLM sums them in usage.prompt_tokens), so the batch's work and
 * KV are the sum. A further text counts ceil(chars / 4), unread, as any text
 * past the key window; a further id list its length.
 */
export function writeCompletionsPrompt(body: CompletionsBody, sink: PromptSink): void {
  const p = body.prompt;
  if (typeof p === "string") {
    sink.text(p);
    return;
  }
  if (p.length === 0) return;
  const first = p[0];
  if (typeof first === "number") {
    sink.ids(p as readonly number[]);
    return;
  }
  if (typeof first === "string") sink.text(first);
  else if (first !== undefined) sink.ids(first);
  for (let i = 1; i < p.length; i++) {
    const next = p[i];
    if (typeof next === "string") sink.counted(next);
    else if (Array.isArray(next)) sink.ids(NO_IDS, next.length);
  }
}
