/**
 * One streamed OpenAI request, timed from the client's side: time to the
 * first content byte (TTFT), end-to-end latency, the usage the server
 * reported (stream_options.include_usage) and the gateway's routing headers.
 *
 * Every request ends in exactly one outcome, so nothing goes uncounted:
 * - ok:    HTTP 200 and a stream that ended with `data: [DONE]`;
 * - error: the server answered with a non-200 status (or an error event);
 * - lost:  no answer, a broken connection, a stream cut before [DONE], or a timeout.
 */

export type Outcome = "ok" | "error" | "lost";

export interface RequestResult {
  readonly outcome: Outcome;
  /** HTTP status; 0 when no response arrived. */
  readonly status: number;
  /** ms from send to the first non-empty content delta; undefined if none. */
  readonly ttftMs?: number;
  /** ms from send to the end of the body (or the failure). */
  readonly e2eMs: number;
  /** Content deltas received (one per token for vLLM-like servers). */
  readonly contentChunks: number;
  readonly promptTokens?: number;
  readonly completionTokens?: number;
  readonly cachedTokens?: number;
  readonly backend?: string;
  readonly route?: string;
  readonly expectedCachedTokens?: number;
  /** The x-request-id the backend was sent (the gateway makes a client's own id unique), when a gateway says. */
  readonly upstreamRequestId?: string;
  /** The response's retry-after header (a 429 or 503 passed on), as sent. */
  readonly retryAfter?: string;
  readonly errorType?: string;
  readonly error?: string;
}

export interface StreamRequest {
  readonly url: string;
  readonly apiKey?: string;
  /** Serialized JSON body with stream: true. */
  readonly body: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly headers?: Readonly<Record<string, string>>;
}

interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

interface Chunk {
  choices?: { delta?: { content?: string | null }; text?: string | null }[];
  usage?: Usage | null;
  error?: { type?: string; message?: string };
}

function numberHeader(h: Headers, name: string): number | undefined {
  const v = h.get(name);
  if (v === null) return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

export async function streamRequest(req: StreamRequest): Promise<RequestResult> {
  const t0 = performance.now();
  const headers: Record<string, string> = { ...req.headers, "content-type": "application/json" };
  if (req.apiKey !== undefined) headers.authorization = `Bearer ${req.apiKey}`;
  const timeout = AbortSignal.timeout(req.timeoutMs);
  const signal = req.signal === undefined ? timeout : AbortSignal.any([timeout, req.signal]);
  let res: Response;
  try {
    res = await fetch(req.url, { method: "POST", headers, body: req.body, signal });
  } catch (err) {
    return {
      outcome: "lost",
      status: 0,
      e2eMs: performance.now() - t0,
      contentChunks: 0,
      error: message(err),
    };
  }
  const routing = {
    backend: res.headers.get("x-prefix-gateway-backend") ?? undefined,
    route: res.headers.get("x-prefix-gateway-route") ?? undefined,
    expectedCachedTokens: numberHeader(res.headers, "x-prefix-gateway-cached-tokens-expected"),
    upstreamRequestId: res.headers.get("x-prefix-gateway-upstream-request-id") ?? undefined,
    retryAfter: res.headers.get("retry-after") ?? undefined,
  };
  if (res.status !== 200) {
    const text = await res.text().catch(() => "");
    let errorType: string | undefined;
    try {
      errorType = (JSON.parse(text) as Chunk).error?.type;
    } catch {
      errorType = undefined;
    }
    return {
      outcome: "error",
      status: res.status,
      e2eMs: performance.now() - t0,
      contentChunks: 0,
      errorType,
      error: text.slice(0, 300),
      ...routing,
    };
  }
  let ttftMs: number | undefined;
  let contentChunks = 0;
  let usage: Usage | undefined;
  let done = false;
  let streamError: Chunk["error"];
  const decoder = new TextDecoder();
  let buffer = "";
  const onEvent = (data: string): void => {
    if (data === "[DONE]") {
      done = true;
      return;
    }
    const chunk = JSON.parse(data) as Chunk;
    if (chunk.error !== undefined) streamError = chunk.error;
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices ?? []) {
      const piece = c.delta?.content ?? c.text;
      if (piece) {
        ttftMs ??= performance.now() - t0;
        contentChunks++;
      }
    }
  };
  try {
    if (res.body === null) throw new Error("no body");
    const reader = res.body.getReader();
    for (;;) {
      const { done: ended, value: bytes } = await reader.read();
      if (ended) break;
      // SSE allows CRLF line ends; normalise so one separator search covers both.
      buffer += decoder.decode(bytes, { stream: true }).replaceAll("\r\n", "\n");
      let cut = buffer.indexOf("\n\n");
      while (cut >= 0) {
        for (const line of buffer.slice(0, cut).split("\n")) {
          if (line.startsWith("data:")) onEvent(line.slice(5).trim());
        }
        buffer = buffer.slice(cut + 2);
        cut = buffer.indexOf("\n\n");
      }
    }
  } catch (err) {
    return {
      outcome: "lost",
      status: res.status,
      ttftMs,
      e2eMs: performance.now() - t0,
      contentChunks,
      error: message(err),
      ...routing,
    };
  }
  const e2eMs = performance.now() - t0;
  const base = {
    status: res.status,
    ttftMs,
    e2eMs,
    contentChunks,
    promptTokens: usage?.prompt_tokens,
    completionTokens: usage?.completion_tokens,
    cachedTokens: usage?.prompt_tokens_details?.cached_tokens,
    ...routing,
  };
  if (streamError !== undefined)
    return { ...base, outcome: "error", errorType: streamError.type, error: streamError.message };
  if (!done) return { ...base, outcome: "lost", error: "stream ended before [DONE]" };
  return { ...base, outcome: "ok" };
}

function message(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : "";
    return `${err.name}: ${err.message}${cause}`;
  }
  return String(err);
}
