/** What the emulator's fault, control and lifecycle tests send and wait for (plain fetch over loopback). */
import { connect } from "node:net";

export const TEST_MODEL = "llama-3.1-8b-instruct";

export function chatRequest(user: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    model: TEST_MODEL,
    messages: [
      { role: "system", content: "You are a terse assistant." },
      { role: "user", content: user },
    ],
    max_tokens: 3,
    ...extra,
  });
}

export function postChat(url: string, body: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    signal,
  });
}

/** Polls `ok` every 5 ms until it holds; throws after `timeoutMs` naming what was awaited. */
export async function until(what: string, ok: () => boolean, timeoutMs = 2_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!ok()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Resolves to "pending" if `p` has not settled within `ms`. */
export function settlesWithin<T>(p: Promise<T>, ms: number): Promise<T | "pending"> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<"pending">((r) => {
    timer = setTimeout(() => r("pending"), ms);
  });
  return Promise.race([p, pending]).finally(() => clearTimeout(timer));
}

/** The network error code under a failed fetch or body read (ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET). */
export function causeCode(err: unknown): string | undefined {
  const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === "string" ? cause.code : undefined;
}

export interface SseRead {
  /** Parsed data events before the end, or before the error. */
  readonly events: Record<string, unknown>[];
  readonly done: boolean;
  /** The error that ended the read, if the body did not end cleanly. */
  readonly error: unknown;
}

/** Reads an SSE body to its end or its error (never throws); stops early, unlocked, after `maxEvents` data events. */
export async function readSse(res: Response, maxEvents = Number.POSITIVE_INFINITY): Promise<SseRead> {
  const events: Record<string, unknown>[] = [];
  let done = false;
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = "";
  try {
    while (events.length < maxEvents) {
      const r = await reader.read();
      if (r.done) break;
      buf += dec.decode(r.value, { stream: true });
      for (let i = buf.indexOf("\n\n"); i >= 0; i = buf.indexOf("\n\n")) {
        const data = buf.slice(0, i).replace(/^data: /, "");
        buf = buf.slice(i + 2);
        if (data === "[DONE]") done = true;
        else events.push(JSON.parse(data) as Record<string, unknown>);
      }
    }
  } catch (error) {
    return { events, done, error };
  }
  // Stopped early: the caller may read on.
  reader.releaseLock();
  return { events, done, error: undefined };
}

/** Content deltas of chat chunks (the role chunk carries none). */
export function contentOf(events: readonly Record<string, unknown>[]): string[] {
  return events
    .map((e) => (e.choices as { delta?: { content?: string } }[])[0]?.delta?.content ?? "")
    .filter((c) => c !== "");
}

/**
 * The error code of a fresh TCP connection to the port ("ECONNREFUSED" when
 * nothing listens), or "connected". A raw connect, because fetch may reuse a
 * pooled connection whose close it has not yet noticed.
 */
export function tcpConnect(port: number, host = "127.0.0.1"): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}
