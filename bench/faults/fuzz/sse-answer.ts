/**
 * What a streamed OpenAI answer said, read from its text: whether every
 * event was well-formed, whether it ended with `data: [DONE]`, the text of
 * each choice, its finish reasons, usage and error events. The fuzz driver
 * judges both its steady clients and the fuzzed requests that got a 200 by it.
 */

export interface SseAnswer {
  /** Events whose data was neither JSON nor `[DONE]`, or that came after `[DONE]`. */
  readonly malformed: number;
  /** The last event was `data: [DONE]`. */
  readonly done: boolean;
  /** Text of each choice index, in order of arrival. */
  readonly text: ReadonlyMap<number, string>;
  /** finish_reason of each choice that sent one. */
  readonly finish: ReadonlyMap<number, string>;
  readonly usage: boolean;
  /** message of the first `{"error": …}` event. */
  readonly error?: string;
}

interface Chunk {
  choices?: {
    index?: number;
    delta?: { content?: string | null };
    text?: string | null;
    finish_reason?: string | null;
  }[];
  usage?: unknown;
  error?: { message?: string };
}

export function parseSse(body: string): SseAnswer {
  const text = new Map<number, string>();
  const finish = new Map<number, string>();
  let malformed = 0;
  let done = false;
  let usage = false;
  let error: string | undefined;
  for (const event of body.replaceAll("\r\n", "\n").split("\n\n")) {
    if (event.trim() === "") continue;
    const data = event
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trim())
      .join("\n");
    if (done) {
      malformed++;
      continue;
    }
    if (data === "[DONE]") {
      done = true;
      continue;
    }
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch {
      malformed++;
      continue;
    }
    if (chunk.error !== undefined) error ??= String(chunk.error.message);
    if (chunk.usage !== undefined && chunk.usage !== null) usage = true;
    for (const c of chunk.choices ?? []) {
      const i = c.index ?? 0;
      const piece = c.delta?.content ?? c.text ?? "";
      text.set(i, (text.get(i) ?? "") + piece);
      if (typeof c.finish_reason === "string") finish.set(i, c.finish_reason);
    }
  }
  return { malformed, done, text, finish, usage, ...(error !== undefined ? { error } : {}) };
}
