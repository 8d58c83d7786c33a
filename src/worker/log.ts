/**
 * The one structured logger. Each request produces exactly one JSON line
 * (read it with `wrangler tail --format json`), emitted when the request is
 * really over: after the last streamed byte, not when headers leave. Fields
 * are facts about routing and timing; prompts and keys never appear.
 */
import type { BlockKey } from "../prefix/block-keys";
import { chainDigest } from "../prefix/chain-digest";
import { quoteClient } from "./errors";
import { sha256Hex } from "./sha256";

export interface RequestLogFields {
  requestId: string;
  method: string;
  path: string;
  /** Epoch ms when the gateway received the request (the line is written when it ends). */
  arrivedAt: number;
  model?: string;
  /** Gateway key the request authenticated with (its 8-hex fingerprint, as fingerprint() gives). */
  key?: string;
  /** Pool shard / tenant isolation in use (a fingerprint, not the raw key). */
  tenant?: string;
  backend?: string;
  policy?: string;
  reason?: string;
  promptTokens?: number;
  /** Prompt tokens the routing key was computed from; promptTokens past them is an estimate. */
  keyedTokens?: number;
  /** Every k-th chained block key of the keyed prefix, 8 hex each (src/prefix/chain-digest.ts): no text. */
  prefixKeys?: string;
  /** Tokens each key of prefixKeys covers. */
  prefixEvery?: number;
  /** The client's max_tokens / max_completion_tokens, when it sent one. */
  maxTokens?: number;
  /**
   * The prompt as routing counted it, when the bound changed the Worker's count (past what the largest engine
   * holds: src/routing/prompt-bound.ts): what the policy, its ledger and /admin/stats' hit figures read. The
   * line's promptTokens is the Worker's count, or the engine's once it reports one.
   */
  routedPromptTokens?: number;
  /** maxTokens as routing charged it, when not as sent: prompt + output never above the largest engine's KV. */
  routedMaxTokens?: number;
  /** Where the hits went, in prompt tokens: the longest prefix any usable backend held (per the index)… */
  cachedTokensAvailable?: number;
  /** …what the decision expected on the chosen backend (captured)… */
  cachedTokensExpected?: number;
  /** …and what the engine reused (delivered: usage.prompt_tokens_details.cached_tokens). */
  cachedTokensReported?: number;
  /** The A/B arm that served ("a", or "b" under a split). */
  arm?: string;
  /** SHADOW on: the backend prefix_aware would have chosen, and what it expected cached there. */
  shadowBackend?: string;
  cachedTokensShadow?: number;
  /** usage.completion_tokens as the backend reported it. */
  outputTokens?: number;
  inflightAtDecision?: number;
  /** Gateway received the request → first content byte from the backend. */
  ttftMs?: number;
  durationMs?: number;
  status?: number;
  /** Set when the request was retried on another backend (the first backend's id). */
  retriedFrom?: string;
  /** The retry's backend, when it answered busy (429, 503 with a retry-after) and the request moved on again. */
  busyRetriedFrom?: string;
  /** A retry was wanted but the pool's retry budget was spent. */
  retryRefused?: boolean;
  /** The X-Request-Id the backend was sent, when not requestId itself (a client's id, made unique). */
  upstreamRequestId?: string;
  /** How the final attempt failed (connect_error, timeout, throttled, http_500, stream_error…). */
  failure?: string;
  stream?: boolean;
  /**
   * The backend's 2xx carried an error (an OpenAI error object, an SSE error event): relayed unchanged, a failed
   * request, no fault of the backend (respond.ts).
   */
  backendError?: true;
  /** Client went away before the response finished. */
  aborted?: boolean;
  /**
   * With aborted: the client held its connection but took none of the stream's bytes for CLIENT_STALL_TIMEOUT_MS,
   * so the relay cut the backend's request (relay.ts).
   */
  clientStall?: true;
  /**
   * The request was shed with a 429 (every usable backend at its bound on requests in flight): decided by the
   * RouterDO, or by this isolate alone while the RouterDO was out of reach (its own requests filled them); or
   * key_share: the RouterDO had room, but the key held its fair share while other keys waited (key-share.ts).
   */
  shed?: "router" | "local" | "key_share";
  /** The per-key limit that refused the request with 429: requests per period, or requests in flight. */
  limitedBy?: "rate" | "concurrency";
  /** The key's requests in flight when its limiter granted or refused this one (limit on). */
  keyInflight?: number;
  /** The rate limiter failed (error) or is not bound (unbound): the request went ahead unlimited. */
  rateLimitFailOpen?: "error" | "unbound";
  /** The key's KeyLimiterDO failed (error) or missed its deadline (timeout): the request went ahead. */
  concurrencyFailOpen?: "error" | "timeout";
  error?: string;
}

/**
 * Fields as set() and emit() take them: declared ones only. A conditional spread (`...(c ? { x: 1 } : {})`)
 * escapes TypeScript's excess-property check, so a field could be logged and documented while the type never
 * named it; this names every extra key `never`, which fails to compile instead.
 */
export type DeclaredLogFields<T> = T &
  Partial<RequestLogFields> & { [K in Exclude<keyof T, keyof RequestLogFields>]: never };

export type LogSink = (line: string) => void;

// console.log is what `wrangler tail` and Workers Logs collect; one call per line.
const defaultSink: LogSink = (line) => console.log(line);

export class RequestLog {
  private readonly fields: RequestLogFields;
  private emitted = false;
  private deferred = false;

  constructor(
    requestId: string,
    method: string,
    path: string,
    private readonly startedAt: number,
    private readonly sink: LogSink = defaultSink,
  ) {
    // The method and path are the client's text: a 9,000-character path was 9,000 characters in wrangler tail.
    // Cut as error messages quote a client (quoteClient), so no line grows with what a client sends.
    this.fields = { requestId, method: quoteClient(method), path: quoteClient(path), arrivedAt: startedAt };
  }

  set<T extends object>(fields: DeclaredLogFields<T>): void {
    Object.assign(this.fields, bounded(fields));
  }

  /** The response outlives the handler (a relayed stream): the relay emits the line when it ends. */
  defer(): void {
    this.deferred = true;
  }

  get isDeferred(): boolean {
    return this.deferred;
  }

  /** Writes the line once; later calls are ignored, so every exit path may call it. */
  emit<T extends object = Record<never, never>>(
    now: number,
    fields: DeclaredLogFields<T> = {} as DeclaredLogFields<T>,
  ): void {
    if (this.emitted) return;
    this.emitted = true;
    Object.assign(this.fields, bounded(fields));
    this.fields.durationMs = now - this.startedAt;
    this.sink(JSON.stringify({ msg: "request", ...this.fields }));
  }
}

/**
 * `error` may carry an unexpected error's message (app.ts onError), which may quote what the client sent: cut
 * like the path. The other text fields are the gateway's own words or ids, or bounded where they are read (the
 * body's model at 256, a client's request id at 128).
 */
function bounded<T extends Partial<RequestLogFields>>(fields: T): T {
  return typeof fields.error === "string" ? { ...fields, error: quoteClient(fields.error) } : fields;
}

/** A short, non-reversible fingerprint (first 8 hex of SHA-256) for identifiers we may not log raw. */
export function fingerprint(value: string): Promise<string> {
  return sha256Hex(value, 4);
}

/**
 * What `prefix-gateway analyze` reads from a line besides its counts, never
 * text: the digest of the request's block-key chain and the client's
 * max_tokens. One function for the Worker and the analyzer's tests, so the
 * line they agree on is the line the Worker writes.
 */
export function prefixLogFields(
  blocks: readonly BlockKey[],
  blockTokens: number,
  prefixTokens: number,
  maxTokens: number | undefined,
): Pick<RequestLogFields, "prefixKeys" | "prefixEvery" | "maxTokens"> {
  return {
    ...chainDigest(blocks, blockTokens, prefixTokens),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
  };
}
