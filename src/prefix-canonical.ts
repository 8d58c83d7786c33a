/**
 * The canonical prompt of an OpenAI request: an ordered list of segments
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
 */

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

export type Segment =
  | { readonly kind: "text"; readonly text: string }
  /** Marker/fingerprint ids; `extraTokens` is what the segment really costs the engine beyond them (media). */
  | { readonly kind: "mark"; readonly ids: readonly number[]; readonly extraTokens?: number }
  | { readonly kind: "ids"; readonly ids: readonly number[] };

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

/**
 * 64-bit fingerprint of a string as two 32-bit words (FNV-1a and a
 * Murmur-style lane over UTF-16 units). Media arrive as URLs or base64
 * data: hashing the string (~1 ms per MB) means the bytes are never decoded.
 */
export function fingerprint(s: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9747b28c ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  b ^= b >>> 13;
  b = Math.imul(b, 0xc2b2ae35);
  b ^= b >>> 16;
  return [a >>> 0, b >>> 0];
}

/** JSON with object keys sorted at every level: clients that order schema keys differently get the same keys. */
export function stableStringify(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(",")}]`;
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify(obj[k])}`).join(",")}}`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function mediaMark(mark: number, source: string, extraTokens = 0): Segment {
  return { kind: "mark", ids: [mark, ...fingerprint(source)], extraTokens };
}

function partSegments(part: ContentPart, out: Segment[]): void {
  const field = part[part.type];
  switch (part.type) {
    case "text":
    case "input_text": {
      const text = str(part.text);
      if (text !== undefined) out.push({ kind: "text", text });
      return;
    }
    case "refusal": {
      const text = str(part.refusal);
      if (text !== undefined) out.push({ kind: "text", text });
      return;
    }
    case "image_url": {
      const url = isRecord(field) ? str(field.url) : str(field);
      out.push(mediaMark(MARKS.image, url ?? stableStringify(field), IMAGE_TOKENS_ESTIMATE));
      return;
    }
    case "input_audio": {
      const data = isRecord(field) ? str(field.data) : undefined;
      out.push(mediaMark(MARKS.audio, data ?? stableStringify(field)));
      return;
    }
    case "video_url": {
      const url = isRecord(field) ? str(field.url) : str(field);
      out.push(mediaMark(MARKS.video, url ?? stableStringify(field)));
      return;
    }
    case "file": {
      const f = isRecord(field) ? field : {};
      const id = str(f.file_id) ?? str(f.file_data) ?? stableStringify(f);
      out.push(mediaMark(MARKS.file, id));
      return;
    }
    default:
      // Unknown part types still change the keys, by their whole content.
      out.push(mediaMark(MARKS.otherPart, stableStringify(part)));
  }
}

function toolCallSegments(toolCalls: unknown, out: Segment[]): void {
  if (!Array.isArray(toolCalls)) return;
  for (const call of toolCalls) {
    out.push({ kind: "mark", ids: [MARKS.toolCall] });
    const fn = isRecord(call) ? call.function : undefined;
    if (isRecord(fn)) {
      out.push({ kind: "text", text: str(fn.name) ?? "" });
      // Arguments are a JSON string as the model produced it: kept verbatim, as templates render them.
      const args = fn.arguments;
      out.push({ kind: "text", text: typeof args === "string" ? args : stableStringify(args) });
    } else {
      out.push({ kind: "text", text: stableStringify(call) });
    }
  }
}

function messageSegments(m: ChatMessage, out: Segment[]): void {
  const roleMark = ROLE_MARKS[m.role];
  if (roleMark !== undefined) out.push({ kind: "mark", ids: [roleMark] });
  else out.push({ kind: "mark", ids: [MARKS.roleOther] }, { kind: "text", text: m.role });
  if (typeof m.name === "string" && m.name !== "") {
    out.push({ kind: "mark", ids: [MARKS.name] }, { kind: "text", text: m.name });
  }
  const toolCallId = str(m.tool_call_id);
  if (toolCallId !== undefined)
    out.push({ kind: "mark", ids: [MARKS.toolCallId] }, { kind: "text", text: toolCallId });
  const content = m.content;
  if (typeof content === "string") out.push({ kind: "text", text: content });
  else if (Array.isArray(content)) for (const part of content) partSegments(part, out);
  toolCallSegments(m.tool_calls, out);
  out.push({ kind: "mark", ids: [MARKS.endMessage] });
}

/** One tool definition as text: function tools by name, description and parameters; others whole. */
function toolText(tool: unknown): string {
  const fn = isRecord(tool) && tool.type === "function" ? tool.function : undefined;
  if (isRecord(fn)) {
    return stableStringify({ name: fn.name, description: fn.description, parameters: fn.parameters });
  }
  return stableStringify(tool);
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
export function chatSegments(body: ChatBody): Segment[] {
  const out: Segment[] = [];
  const msgs = body.messages;
  let i = 0;
  for (; i < msgs.length; i++) {
    const m = msgs[i]!;
    if (m.role !== "system" && m.role !== "developer") break;
    messageSegments(m, out);
  }
  const tools = body.tools;
  if (tools !== undefined && tools !== null && tools.length > 0) {
    out.push({ kind: "mark", ids: [MARKS.tools] });
    for (const tool of tools) out.push({ kind: "text", text: toolText(tool) });
  }
  for (; i < msgs.length; i++) messageSegments(msgs[i]!, out);
  return out;
}

/**
 * Completions: the prompt text, or its token ids as given. A batch (array of
 * several prompts) is routed on its first prompt: one backend serves the
 * whole batch, and the first prompt is as good a representative as any.
 */
export function completionsSegments(body: CompletionsBody): Segment[] {
  const p = body.prompt;
  if (typeof p === "string") return [{ kind: "text", text: p }];
  if (p.length === 0) return [];
  const first = p[0];
  if (typeof first === "number") return [{ kind: "ids", ids: p as readonly number[] }];
  if (typeof first === "string") return [{ kind: "text", text: first }];
  return first === undefined ? [] : [{ kind: "ids", ids: first }];
}
