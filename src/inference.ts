/**
 * POST /v1/chat/completions and /v1/completions: validate, key the prefix,
 * ask the pool's RouterDO where to go, forward, relay, report back.
 */
import type { Context } from "hono";
import type { CompleteInput, FailureKind } from "../durable-objects/rpc";
import type { GatewayEnv } from "./app-types";
import type { BackendConfig } from "./config";
import { backendUnreachable, GatewayError, modelNotFound } from "./errors";
import { fingerprint } from "./log";
import type { ChatBody, InferenceBody, InferenceKind } from "./openai-schemas";
import { poolFor, type RouteOk, type RouterStub, routerStub, routeVia } from "./pools";
import { prefixKeysForRequest } from "./prefix";
import { callBackend, isRetryableStatus, type RelayEnd, relay, type UpstreamAttempt } from "./proxy";
import { readInferenceBody } from "./request-body";
import { JsonTap, SseTap, type Tap } from "./stream-tap";

const PATHS: Record<InferenceKind, string> = {
  chat: "/v1/chat/completions",
  completions: "/v1/completions",
};

/** Headers of the backend's response that the client gets (others — cookies, server, lengths — do not pass). */
const PASSED_HEADERS = ["content-type", "openai-processing-ms", "x-ratelimit-remaining-requests"];

interface Leg {
  readonly route: RouteOk;
  readonly backend: BackendConfig;
  readonly attempt: UpstreamAttempt;
}

function failureOf(attempt: UpstreamAttempt): FailureKind | undefined {
  if (attempt.kind === "connect_error") return "connect_error";
  return attempt.res.status >= 500 ? "server_error" : undefined;
}

export function inferenceHandler(kind: InferenceKind) {
  return async function inference(c: Context<GatewayEnv>): Promise<Response> {
    const config = c.get("config");
    const log = c.get("log");
    const requestId = c.get("requestId");
    const { body, raw, text } = await readInferenceBody(c.req.raw, kind);
    const model = body.model;
    log.set({ model, stream: body.stream === true });
    if (!config.models.includes(model)) throw modelNotFound(model);

    const tenant = body.prompt_cache_key ?? c.req.header("x-prefix-cache-key") ?? undefined;
    if (tenant !== undefined && tenant !== "") log.set({ tenant: await fingerprint(tenant) });
    const { blocks, promptTokens } = prefixKeysForRequest(kind, body, {
      model,
      ...(tenant !== undefined && tenant !== "" ? { tenant } : {}),
      blockTokens: config.router.blockTokens,
      prefixTokens: config.prefixTokens,
    });
    log.set({ promptTokens });
    const outputTokens =
      (kind === "chat" ? (body as ChatBody).max_completion_tokens : undefined) ??
      body.max_tokens ??
      undefined;

    // A streamed answer carries usage only if asked for; we ask, and strip that chunk if the client did not.
    const stream = body.stream === true;
    const strip = stream && body.stream_options?.include_usage !== true;
    const upstreamBody = strip ? withIncludeUsage(text, raw, body.stream_options) : text;

    const pool = await poolFor(config, model);
    const stub = routerStub(c.env.ROUTER, model);
    const abort = new AbortController();
    c.req.raw.signal?.addEventListener("abort", () => abort.abort(), { once: true });

    const routeReq = { blocks, promptTokens, ...(outputTokens !== undefined ? { outputTokens } : {}) };
    const go = async (retryOf?: { leaseId: string; failure: FailureKind }): Promise<Leg> => {
      const route = await routeVia(stub, pool, retryOf ? { ...routeReq, retryOf } : routeReq);
      const backend = config.backendsById.get(route.backendId);
      if (backend === undefined)
        throw new GatewayError(503, "service_unavailable", "fleet_changing", "Fleet is changing; retry.");
      const attempt = await callBackend(backend, PATHS[kind], upstreamBody, requestId, abort.signal);
      return { route, backend, attempt };
    };

    let leg = await go();
    const firstFailure = failureOf(leg.attempt);
    if (
      (leg.attempt.kind === "connect_error" || isRetryableStatus(leg.attempt.res.status)) &&
      pool.spec.backends.length > 1 &&
      !abort.signal.aborted
    ) {
      // Nothing reached the client yet: try once more elsewhere. The RouterDO releases the failed lease
      // and marks its backend unhealthy in the same call, so the re-route cannot pick it again.
      if (leg.attempt.kind === "response") await leg.attempt.res.body?.cancel();
      log.set({ retriedFrom: leg.route.backendId });
      leg = await go({ leaseId: leg.route.leaseId, failure: firstFailure ?? "server_error" });
    }

    const { route, attempt } = leg;
    log.set({
      backend: route.backendId,
      policy: route.policy,
      reason: route.reason,
      cachedTokensExpected: route.expectedCachedTokens,
      inflightAtDecision: route.inflightAtDecision,
    });
    const report = (outcome: CompleteInput) =>
      c.executionCtx.waitUntil(completeLease(stub, route.leaseId, outcome));

    if (attempt.kind === "connect_error") {
      report({ ok: false, failure: "connect_error" });
      throw backendUnreachable(`could not connect to backend '${route.backendId}'`);
    }

    const res = attempt.res;
    const headers = new Headers();
    for (const h of PASSED_HEADERS) {
      const v = res.headers.get(h);
      if (v !== null) headers.set(h, v);
    }
    headers.set("x-prefix-gateway-backend", route.backendId);
    headers.set("x-prefix-gateway-route", route.reason);
    headers.set("x-prefix-gateway-cached-tokens-expected", String(route.expectedCachedTokens));
    if (stream && res.ok) headers.set("cache-control", "no-cache");

    const startedAt = c.get("startedAt");
    let firstContentAt: number | undefined;
    const isSse = (res.headers.get("content-type") ?? "").includes("text/event-stream");
    const tap: Tap = isSse ? new SseTap(strip) : new JsonTap();
    const onEnd = (end: RelayEnd, t: Tap) => {
      const now = Date.now();
      const failure: FailureKind | undefined =
        end.kind === "client_abort"
          ? "client_abort"
          : end.kind === "stream_error"
            ? "stream_error"
            : failureOf(attempt);
      const outcome: CompleteInput = {
        ok: res.ok && (end.kind === "done" || t.sawContent),
        status: res.status,
        ...(failure !== undefined ? { failure } : {}),
        ...(t.usage?.promptTokens !== undefined ? { promptTokens: t.usage.promptTokens } : {}),
        ...(t.usage?.cachedTokens !== undefined ? { cachedTokens: t.usage.cachedTokens } : {}),
        // TTFT of the backend alone (fetch → first content), what the router's prefill model learns from.
        ...(isSse && firstContentAt !== undefined ? { ttftMs: firstContentAt - attempt.startedAt } : {}),
      };
      report(outcome);
      c.get("log").emit(now, {
        status: res.status,
        ...(t.usage?.promptTokens !== undefined ? { promptTokens: t.usage.promptTokens } : {}),
        ...(t.usage?.cachedTokens !== undefined ? { cachedTokensReported: t.usage.cachedTokens } : {}),
        ...(firstContentAt !== undefined && isSse ? { ttftMs: firstContentAt - startedAt } : {}),
        ...(end.kind === "client_abort" ? { aborted: true } : {}),
        ...(end.kind === "stream_error" ? { error: end.message } : {}),
      });
    };
    log.defer();
    if (res.body === null) {
      onEnd({ kind: "done" }, tap);
      return new Response(null, { status: res.status, headers });
    }
    const out = relay(res.body, tap, abort, {
      onFirstContent: (at) => {
        firstContentAt = at;
      },
      onEnd,
    });
    return new Response(out, { status: res.status, headers });
  };
}

/**
 * The client's JSON with `stream_options.include_usage: true`. Without
 * stream_options (what the OpenAI SDKs send) the field is appended to the
 * text as is: the same bytes JSON.stringify({ ...raw, stream_options }) gives
 * up to whitespace, without re-serialising a prompt of megabytes. Otherwise
 * the object is rebuilt so the client's other stream_options survive.
 */
function withIncludeUsage(
  text: string,
  raw: Record<string, unknown>,
  given: InferenceBody["stream_options"],
): string {
  if (!Object.hasOwn(raw, "stream_options")) {
    // A validated body is a non-empty object, so its text ends with `}` (and maybe whitespace).
    const close = text.lastIndexOf("}");
    return `${text.slice(0, close)},"stream_options":{"include_usage":true}${text.slice(close)}`;
  }
  return JSON.stringify({ ...raw, stream_options: { ...(given ?? {}), include_usage: true } });
}

/** The completion report; failures are swallowed (the lease expires by itself) but never silently lost. */
async function completeLease(stub: RouterStub, leaseId: string, outcome: CompleteInput): Promise<void> {
  try {
    await stub.complete(leaseId, outcome);
  } catch {
    // The RouterDO was unreachable: the lease's TTL releases its in-flight slot instead.
  }
}
