/**
 * Taps a backend response as it streams past: finds `usage` (with
 * `prompt_tokens_details.cached_tokens`) and the first content-bearing SSE
 * event (for TTFT) by parsing a copy of the text incrementally. In pass-
 * through mode the bytes handed on are the very chunks that arrived, with no
 * delay. In strip mode (the gateway itself asked the backend for a usage
 * chunk the client did not request) complete events are forwarded as soon
 * as their terminating blank line arrives, minus the usage-only event.
 */

export interface Usage {
  readonly promptTokens?: number;
  readonly completionTokens?: number;
  readonly cachedTokens?: number;
}

export interface Tap {
  /** Bytes to forward for this chunk (the chunk itself in pass-through mode), or null for none yet. */
  push(chunk: Uint8Array): Uint8Array | null;
  /** Upstream ended: bytes still to forward, if any. */
  end(): Uint8Array | null;
  readonly usage: Usage | undefined;
  /** A content-bearing event (or, for JSON, any byte) has been seen. */
  readonly sawContent: boolean;
  /** The bytes handed on so far stop inside an event (or we cannot tell): a break would split it. */
  readonly midEvent: boolean;
  /**
   * The answer carried an OpenAI error object inside its 2xx (an SSE `data: {"error": …}` event, how vLLM
   * fails a request mid-stream, or a JSON body that is one): relayed as is, but the request did not succeed.
   */
  readonly sawError: boolean;
  /** The event stream's `data: [DONE]` has been seen: the answer is complete (the body should end now). */
  readonly sawDone: boolean;
  /**
   * The answer is whole though its body did not end: an event stream past its `[DONE]`, or a JSON body whose
   * value has closed. Asked only when reading the rest fails, so a JSON body is parsed then, not per chunk.
   */
  wholeSoFar(): boolean;
  /**
   * Set by end(): the body ended inside an event whose data is cut (neither [DONE] nor JSON; or one longer
   * than the tap holds, never finished). A client's SSE parser drops an unfinished event without a word.
   */
  readonly endedInsideEvent: boolean;
  /**
   * How many whole events with data have gone through (SSE; for a JSON body, every chunk counts): what
   * resets the relay's idle deadline. A comment (`: ping`, the keep-alive of many SSE servers and proxies)
   * carries no data and does not count: a hung engine behind a keep-alive is idle.
   */
  readonly events: number;
  /**
   * How many of those carried an answer (data that is neither `[DONE]` nor an error object): the backend's
   * proof of life for other requests waiting on it (backend-progress.ts). An error a front end still sends
   * while its engine is hung proves nothing of the kind. A JSON body counts none while it streams: its
   * end tells (the request's report, respond.ts).
   */
  readonly answers: number;
}

/** An OpenAI error object at the top level of a parsed event or body. */
export function isErrorObject(obj: unknown): boolean {
  const e = typeof obj === "object" && obj !== null ? (obj as { error?: unknown }).error : undefined;
  return typeof e === "object" && e !== null;
}

/**
 * The most of one event the tap holds. A longer one is handed on unparsed as it comes (it cannot be the
 * usage-only chunk: that is `{"id","object","created","model","choices":[],"usage":{…}}`, a few hundred
 * bytes), and parsing resumes at its end, so a usage chunk after it is still found and stripped.
 */
const MAX_PENDING_CHARS = 1 << 20;
/** An event boundary is at most 4 characters (\r\n\r\n): this much of a passed-on tail can start one. */
const BOUNDARY_TAIL_CHARS = 3;
/** A non-streamed body larger than this is relayed but not parsed for usage. */
const MAX_JSON_CHARS = 16 << 20;

/**
 * The most a usage count is believed at: far past any context window or answer. The counts feed the
 * router's models of the backend (its prefill rate, its cache: prefix-aware.ts complete, affinity-index.ts)
 * and the pool's cumulative counters (/admin/stats, /metrics), so a count that cannot be one is dropped.
 */
export const MAX_USAGE_TOKENS = 2 ** 30;

/** A token count as the backend reported it, or undefined when it cannot be one (negative, fractional, absurd). */
function tokenCount(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= MAX_USAGE_TOKENS ? v : undefined;
}

/** OpenAI `usage` → Usage, or undefined when absent. */
export function readUsage(obj: unknown): Usage | undefined {
  if (typeof obj !== "object" || obj === null) return undefined;
  const u = (obj as { usage?: unknown }).usage;
  if (typeof u !== "object" || u === null) return undefined;
  const r = u as Record<string, unknown>;
  const details = r.prompt_tokens_details;
  const cached =
    typeof details === "object" && details !== null
      ? tokenCount((details as Record<string, unknown>).cached_tokens)
      : undefined;
  const out: { promptTokens?: number; completionTokens?: number; cachedTokens?: number } = {};
  const p = tokenCount(r.prompt_tokens);
  const c = tokenCount(r.completion_tokens);
  if (p !== undefined) out.promptTokens = p;
  if (c !== undefined) out.completionTokens = c;
  // A prompt's cached part is part of it: more than the prompt (or beside a prompt count not believed) is no hit.
  if (cached !== undefined && p !== undefined && cached <= p) out.cachedTokens = cached;
  return out;
}

const nonEmpty = (v: unknown) => (typeof v === "string" && v !== "") || (Array.isArray(v) && v.length > 0);

/** Whether a chunk carries generated output (text, reasoning or tool calls), not just the role preamble. */
export function hasContent(obj: unknown): boolean {
  if (typeof obj !== "object" || obj === null) return false;
  const choices = (obj as { choices?: unknown }).choices;
  if (!Array.isArray(choices)) return false;
  for (const ch of choices) {
    if (typeof ch !== "object" || ch === null) continue;
    const c = ch as Record<string, unknown>;
    if (nonEmpty(c.text)) return true;
    const d = c.delta;
    if (typeof d === "object" && d !== null) {
      const delta = d as Record<string, unknown>;
      if (nonEmpty(delta.content) || nonEmpty(delta.reasoning_content) || nonEmpty(delta.reasoning))
        return true;
      if (nonEmpty(delta.tool_calls)) return true;
    }
  }
  return false;
}

function isUsageOnly(obj: unknown): boolean {
  if (typeof obj !== "object" || obj === null) return false;
  const o = obj as { usage?: unknown; choices?: unknown };
  return (
    typeof o.usage === "object" && o.usage !== null && Array.isArray(o.choices) && o.choices.length === 0
  );
}

const EVENT_END = /\r\n\r\n|\n\n|\r\r/g;

/** An event's data: its `data:` lines joined by line breaks (SSE). */
function dataOf(event: string): string {
  let data = "";
  for (const line of event.split(/\r\n|\n|\r/)) {
    if (line.startsWith("data:"))
      data += (data === "" ? "" : "\n") + line.slice(line.startsWith("data: ") ? 6 : 5);
  }
  return data;
}

function parses(json: string): boolean {
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
}

/** Encoding keeps no state: one for every tap. (Decoding a stream does, so each tap has its own decoder.) */
const UTF8_ENCODER = new TextEncoder();

export class SseTap implements Tap {
  usage: Usage | undefined;
  sawContent = false;
  sawError = false;
  sawDone = false;
  endedInsideEvent = false;
  events = 0;
  answers = 0;
  private readonly decoder = new TextDecoder();
  /**
   * The text after the last event boundary, in the pieces it came in: joined only when a boundary arrives,
   * so an event trickled in small chunks costs time linear in its length (one growing string re-scanned
   * on every chunk would cost its square).
   */
  private pendingParts: string[] = [];
  private pendingChars = 0;
  /** The last characters held: where a boundary split across chunks starts. */
  private pendingTail = "";
  /**
   * Inside an event longer than MAX_PENDING_CHARS: its text is handed on as it comes, unparsed, until its
   * boundary; `passedTail` is the end of what was handed on, where a boundary split across chunks starts.
   */
  private passing = false;
  private passedTail = "";
  /** The previous chunk ended exactly at an event boundary (nothing carried over, as text or bytes). */
  private aligned = true;

  constructor(private strip: boolean) {}

  get midEvent(): boolean {
    // Passing a long event on: what went out stops inside it. Otherwise strip mode forwards whole events
    // only; pass-through forwards chunks as they came.
    if (this.passing) return true;
    return !this.strip && this.pendingChars > 0;
  }

  wholeSoFar(): boolean {
    return this.sawDone;
  }

  push(chunk: Uint8Array): Uint8Array | null {
    const wasAligned = this.aligned;
    let text = this.decoder.decode(chunk, { stream: true });
    let kept = "";
    if (this.passing) {
      const boundary = this.passedBoundary(text);
      kept += text.slice(0, boundary);
      text = text.slice(boundary);
      // A piece of an event too long to hold: data handed on (it is an answer's, never a keep-alive's).
      if (boundary > 0) {
        this.events++;
        this.answers++;
      }
    }
    let dropped = false;
    /** Bytes after `data: [DONE]` in this chunk were left out: the chunk cannot be handed on as it came. */
    let afterDone = false;
    if (!this.passing) {
      EVENT_END.lastIndex = 0;
      // Holding part of an event and none ends in this chunk: add it, without joining or scanning what is held.
      // With nothing held (a stream's usual chunk) the loop below is the only scan.
      if (this.pendingChars > 0 && !EVENT_END.test(this.pendingTail + text)) {
        if (text !== "") this.pendingParts.push(text);
        this.pendingChars += text.length;
        this.pendingTail = (this.pendingTail + text).slice(-BOUNDARY_TAIL_CHARS);
      } else {
        const pending = this.pendingParts.join("") + text;
        // Pass-through handed the held part on already: this chunk's own text starts here.
        const heldChars = pending.length - text.length;
        const passed = kept;
        let doneEnd = heldChars;
        let start = 0;
        EVENT_END.lastIndex = 0;
        for (let m = EVENT_END.exec(pending); m !== null; m = EVENT_END.exec(pending)) {
          const end = m.index + m[0].length;
          const event = pending.slice(start, end);
          start = end;
          // Past [DONE] nothing is the answer (the relay drops later chunks whole, relay.ts): the rest of the
          // chunk that carried it goes too, or a backend that writes on in the same write reached the client.
          if (this.sawDone) {
            afterDone = true;
            continue;
          }
          if (!this.inspect(event) || !this.strip) kept += event;
          else dropped = true;
          if (this.sawDone) doneEnd = end;
        }
        if (this.sawDone && start < pending.length) afterDone = true;
        this.hold(this.sawDone ? "" : pending.slice(start));
        // Pass-through forwards this chunk's own text up to the end of [DONE]'s event, nothing after it.
        if (afterDone && !this.strip) kept = passed + pending.slice(heldChars, Math.max(heldChars, doneEnd));
      }
      if (this.pendingChars > MAX_PENDING_CHARS) {
        // One event past the bound (never the usage chunk): hand on what we hold, pass the rest to its end.
        kept += this.pendingParts.join("");
        this.events++;
        this.answers++;
        this.passedTail = this.pendingTail;
        this.hold("");
        this.passing = true;
      }
    }
    // Ending on a line break (ASCII) with nothing pending: the decoder holds no partial character either.
    const last = chunk[chunk.byteLength - 1];
    this.aligned = !this.passing && this.pendingChars === 0 && (last === 0x0a || last === 0x0d);
    if (afterDone) return kept === "" ? null : UTF8_ENCODER.encode(kept);
    if (!this.strip) return chunk;
    // Strip mode, usual case: the chunk was exactly whole events, none dropped. Its own bytes are the
    // answer, with no re-encoding (one chunk per token makes this the hot path of a long stream).
    if (wasAligned && this.aligned && !dropped && kept !== "") return chunk;
    return kept === "" ? null : UTF8_ENCODER.encode(kept);
  }

  /**
   * Passing a long event on: how much of `text` still belongs to it (all of it, or up to and including its
   * boundary, which ends passing). A boundary can begin in the tail already handed on.
   */
  private passedBoundary(text: string): number {
    const seen = this.passedTail + text;
    EVENT_END.lastIndex = 0;
    const m = EVENT_END.exec(seen);
    if (m === null) {
      this.passedTail = seen.slice(-BOUNDARY_TAIL_CHARS);
      return text.length;
    }
    this.passing = false;
    this.passedTail = "";
    // The tail held no whole boundary (it was searched before), so this one ends inside `text`.
    return m.index + m[0].length - (seen.length - text.length);
  }

  private hold(text: string): void {
    this.pendingParts = text === "" ? [] : [text];
    this.pendingChars = text.length;
    this.pendingTail = text.slice(-BOUNDARY_TAIL_CHARS);
  }

  end(): Uint8Array | null {
    const rest = this.pendingParts.join("") + this.decoder.decode();
    this.hold("");
    // What followed [DONE] was dropped as it came (push): a last partial character is no more the answer.
    if (this.sawDone) return null;
    if (this.passing) {
      this.endedInsideEvent = true;
      return this.strip && rest !== "" ? UTF8_ENCODER.encode(rest) : null;
    }
    // An event the body did not end (no blank line after it): whole if its data is [DONE] or JSON (a server
    // that left out the last blank line), cut otherwise.
    const data = dataOf(rest);
    if (data !== "" && data !== "[DONE]" && !parses(data)) this.endedInsideEvent = true;
    const drop = rest !== "" && this.inspect(rest);
    if (!this.strip || rest === "" || drop) return null;
    return UTF8_ENCODER.encode(rest);
  }

  /** Parses one event's data; returns true when it is a usage-only event (strippable). */
  private inspect(event: string): boolean {
    const data = dataOf(event);
    if (data === "") return false;
    this.events++;
    if (data === "[DONE]") {
      this.sawDone = true;
      return false;
    }
    // Once content was seen only usage and an error matter, and an event without either word cannot carry
    // them: a long stream parses its first events and its tail, not one JSON per token.
    if (this.sawContent && !data.includes("usage") && !data.includes('"error"')) {
      this.answers++;
      return false;
    }
    let obj: unknown;
    try {
      obj = JSON.parse(data);
    } catch {
      return false;
    }
    const u = readUsage(obj);
    if (u !== undefined) this.usage = u;
    if (isErrorObject(obj)) this.sawError = true;
    else this.answers++;
    if (!this.sawContent && hasContent(obj)) this.sawContent = true;
    return isUsageOnly(obj);
  }
}

/** A body that opens a JSON object or array (after whitespace and a BOM). */
const STARTS_AS_JSON = /^[\s\ufeff]*[{[]/;

/**
 * Text that opens a JSON object or array and ends before closing it (inside a string, or with a bracket
 * open): a body cut short. One that closes but does not parse for another reason (a Python server's `NaN`,
 * which Python's json reads) is not cut: it is relayed as it is.
 */
export function endsInsideJson(text: string): boolean {
  if (!STARTS_AS_JSON.test(text)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++;
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x7b || ch === 0x5b) depth++;
    else if (ch === 0x7d || ch === 0x5d) depth--;
  }
  return inString || depth > 0;
}

export class JsonTap implements Tap {
  usage: Usage | undefined;
  sawContent = false;
  sawError = false;
  readonly sawDone = false;
  readonly midEvent = false;
  /** The body began as JSON and ended before its JSON did (read at end(); see Tap.endedInsideEvent). */
  endedInsideEvent = false;
  events = 0;
  readonly answers = 0;
  private readonly decoder = new TextDecoder();
  private text = "";
  private overflow = false;

  push(chunk: Uint8Array): Uint8Array {
    this.sawContent = true;
    this.events++;
    if (!this.overflow) {
      this.text += this.decoder.decode(chunk, { stream: true });
      if (this.text.length > MAX_JSON_CHARS) {
        this.overflow = true;
        this.text = "";
      }
    }
    return chunk;
  }

  wholeSoFar(): boolean {
    if (this.overflow) return false;
    try {
      JSON.parse(this.text);
      return true;
    } catch {
      return false;
    }
  }

  end(): null {
    if (this.overflow) return null;
    this.text += this.decoder.decode();
    try {
      const obj: unknown = JSON.parse(this.text);
      this.usage = readUsage(obj);
      this.sawError = isErrorObject(obj);
    } catch {
      // Not JSON (an HTML error page, say): nothing to learn. JSON left open was cut short.
      this.endedInsideEvent = endsInsideJson(this.text);
    }
    this.text = "";
    return null;
  }
}
