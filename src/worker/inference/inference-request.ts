/**
 * Step 1 of an inference request: read and validate the body, key its
 * prefix, and work out what the backend will be sent. Everything later
 * steps need about the client's request, computed once.
 */
import type { Context, MiddlewareHandler } from "hono";
import { prefixKeysForRequest } from "../../prefix/request-keys";
import type { RouteRequest } from "../../routing/types";
import type { GatewayEnv } from "../app-types";
import { requireModel } from "../errors";
import { fingerprint, prefixLogFields } from "../log";
import { replaceMemberValue } from "../request/json-members";
import {
  type ChatBody,
  type CompletionsBody,
  type InferenceKind,
  promptCount,
} from "../request/openai-schemas";
import { readInferenceBody } from "../request/request-body";
import { armKeyOf } from "./arm-key";
import { prefixScopeOf, withCacheSalt } from "./prefix-scope";
import { withUniqueBodyIds } from "./upstream-body-ids";
import { requestIdSuffix, upstreamRequestId } from "./upstream-request-id";

export interface InferenceRequest {
  readonly kind: InferenceKind;
  readonly model: string;
  readonly stream: boolean;
  /** The gateway asked the backend for a usage chunk the client did not: strip it from the stream. */
  readonly strip: boolean;
  /**
   * What the backend receives: the client's bytes, plus include_usage when we add it, and a body request
   * id (SGLang's `rid`) made unique (upstream-body-ids.ts).
   */
  readonly upstreamBody: string;
  /**
   * PREFIX_SCOPE=key, with a backend marked `cacheSalt` in the config: what such a backend receives instead,
   * `upstreamBody` with the scope's `cache_salt` (prefix-scope.ts). Chosen per attempt: a retry may land on
   * a backend of the other kind.
   */
  readonly saltedBody?: string;
  /** The X-Request-Id every backend of this request is sent (upstream-request-id.ts). */
  readonly upstreamRequestId: string;
  /** What the router sees: block keys, prompt tokens, the output hint. */
  readonly route: RouteRequest;
  /** The request's A/B arm key (arm-key.ts): its conversation's or tenant's hash. */
  readonly armKey: number;
  /** Sequences generated per prompt, max(n, best_of): how many max_tokens an answer's usage may hold (usage-bounds.ts). */
  readonly sequences: number;
}

/**
 * Reads and validates the body, and checks its model is served, before the key's concurrency slot is
 * taken (app.ts): a body still arriving holds no slot, and what is wrong with a request (400, 404, 408,
 * 413) is told before a 429 that would only send it back to be refused again.
 */
export function inferenceBody(kind: InferenceKind): MiddlewareHandler<GatewayEnv> {
  return async function inferenceBodyMiddleware(c, next) {
    const config = c.get("config");
    const parsed = await readInferenceBody(c.req.raw, kind, config.deadlines.bodyMs);
    c.get("log").set({ model: parsed.body.model, stream: parsed.body.stream === true });
    requireModel(config, parsed.body.model);
    c.set("inferenceBody", parsed);
    await next();
  };
}

/** The rest of step 1, on the body `inferenceBody` read. */
export async function readInferenceRequest(
  c: Context<GatewayEnv>,
  kind: InferenceKind,
): Promise<InferenceRequest> {
  const config = c.get("config");
  const log = c.get("log");
  const { body, raw, text } = c.get("inferenceBody");
  const model = body.model;
  const stream = body.stream === true;

  const tenant = body.prompt_cache_key ?? c.req.header("x-prefix-cache-key") ?? undefined;
  const hasTenant = tenant !== undefined && tenant !== "";
  if (hasTenant) log.set({ tenant: await fingerprint(tenant) });
  const scope = await prefixScopeOf(
    config.prefixScope,
    c.get("gatewayKey"),
    hasTenant ? tenant : undefined,
    raw,
    config.anyCacheSalt,
  );
  const { blocks, promptTokens, unconfirmedTokens, promptKey, keyed } = prefixKeysForRequest(kind, body, {
    model,
    ...(scope.chainTenant !== undefined ? { tenant: scope.chainTenant } : {}),
    blockTokens: config.router.blockTokens,
    prefixTokens: config.prefixTokens,
  });
  const outputTokens =
    (kind === "chat" ? (body as ChatBody).max_completion_tokens : undefined) ?? body.max_tokens ?? undefined;
  // A batch's prompts: promptTokens sums them (canonical-prompt.ts), the router bounds them per prompt.
  const prompts = kind === "completions" ? promptCount((body as CompletionsBody).prompt) : 1;
  const bestOf = kind === "completions" ? ((body as CompletionsBody).best_of ?? 1) : 1;
  const sequences = Math.max(body.n ?? 1, bestOf);
  // keyedTokens: where the exact count stops and the estimate (ceil(chars / 4)) starts.
  log.set({
    promptTokens,
    keyedTokens: keyed.tokens,
    ...prefixLogFields(blocks, config.router.blockTokens, config.prefixTokens, outputTokens),
  });

  // A streamed answer carries usage only if asked for; we ask, and strip that chunk if the client did not.
  const strip = stream && body.stream_options?.include_usage !== true;
  // One suffix for the header and the body's ids: the engine's logs name this request one way.
  const suffix = requestIdSuffix();
  const upstreamBody = withUniqueBodyIds(strip ? withIncludeUsage(text, raw) : text, raw, suffix);
  return {
    kind,
    model,
    stream,
    strip,
    upstreamBody,
    ...(scope.cacheSalt !== undefined
      ? { saltedBody: withCacheSalt(upstreamBody, raw, scope.cacheSalt) }
      : {}),
    upstreamRequestId: upstreamRequestId(c.get("requestId"), c.get("requestIdFromClient"), suffix),
    route: {
      blocks,
      promptTokens,
      ...(outputTokens !== undefined ? { outputTokens } : {}),
      ...(promptKey !== undefined ? { promptKey } : {}),
      ...(prompts > 1 ? { prompts } : {}),
      ...(unconfirmedTokens !== undefined ? { unconfirmedTokens } : {}),
    },
    // Only a split reads it; without one the RouterDO ignores it, so it is not computed.
    armKey:
      config.router.abPolicy === null
        ? 0
        : armKeyOf(kind, body, model, hasTenant ? tenant : undefined, config.abSticky),
    sequences,
  };
}

/**
 * The client's JSON with `stream_options.include_usage: true`, the rest of it
 * byte for byte. Without stream_options (what the OpenAI SDKs send) the field
 * is appended; with it, only its value is replaced (the client's other
 * stream_options kept). Never JSON.stringify of the parsed body: that would
 * re-serialise a prompt of megabytes, and change what JSON.parse cannot hold
 * (an integer past 2^53 such as a 64-bit `seed` becomes another integer,
 * 1e400 becomes null).
 */
function withIncludeUsage(text: string, raw: Record<string, unknown>): string {
  if (!Object.hasOwn(raw, "stream_options")) {
    // A validated body is a non-empty object, so its text ends with `}` (and maybe whitespace).
    const close = text.lastIndexOf("}");
    return `${text.slice(0, close)},"stream_options":{"include_usage":true}${text.slice(close)}`;
  }
  // Validated: an object or null. Its own fields are booleans and flags, safe to re-serialise.
  const given = (raw.stream_options ?? {}) as Record<string, unknown>;
  return replaceMemberValue(text, "stream_options", JSON.stringify({ ...given, include_usage: true }));
}
