/**
 * POST /v1/chat/completions and /v1/completions, as three steps: read the
 * request (inference-request.ts), route and call with at most one retry
 * (attempts.ts), answer and report (respond.ts).
 */
import type { Context } from "hono";
import type { GatewayEnv } from "../app-types";
import type { InferenceKind } from "../request/openai-schemas";
import { relayNoticeMs } from "../router/relay-notices";
import { poolFor, type RouteCall } from "../router/router-client";
import { routeAndCall } from "./attempts";
import { readInferenceRequest } from "./inference-request";
import { keepAliveUntilOver } from "./request-over";
import { respond } from "./respond";

export function inferenceHandler(kind: InferenceKind) {
  return async function inference(c: Context<GatewayEnv>): Promise<Response> {
    const config = c.get("config");
    const request = await readInferenceRequest(c, kind);
    const call: RouteCall = {
      router: c.env.ROUTER,
      locationHint: config.locationHint,
      pool: await poolFor(config, request.model),
      req: request.route,
      armKey: request.armKey,
      // A key's share of the retry budget keeps one client from taking the retries the others need; with
      // one key configured there are no others, and the key gets the pool's whole budget (red-team.md,
      // fourth pass: one key's share turned 3 of 12 retriable failures into 502s).
      ...(config.gatewayKeys.length > 1 ? { clientKey: c.get("gatewayKey").id } : {}),
      routerMs: config.deadlines.routerMs,
      reportCarryMs: config.deadlines.reportCarryMs,
      relayNoticeMs: relayNoticeMs(config.deadlines.firstByteMs),
      now: Date.now,
      onShed: (by) => c.get("log").set({ shed: by }),
      waitUntil: (p) => c.executionCtx.waitUntil(p),
      backendApiKey: (id) => config.backendsById.get(id)?.apiKey,
    };
    // With the enable_request_signal compatibility flag, this fires when the client disconnects.
    const client = c.req.raw.signal;
    // A client that leaves must still have its lease ended and its request logged (request-over.ts).
    const alive = keepAliveUntilOver(client, call.waitUntil);
    try {
      const legs = await routeAndCall({ call, config, request, client });
      return respond(c, call, request, legs, client, alive);
    } catch (err) {
      alive.over();
      throw err;
    }
  };
}
