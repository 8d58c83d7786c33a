/**
 * The gateway's middleware, each a factory returning a named function:
 * request context (id, clock, log line), allowed methods, config, client
 * auth. Per-key limits live in key-limits/key-limits.ts.
 */
import type { MiddlewareHandler } from "hono";
import type { GatewayEnv } from "./app-types";
import { bearerToken, matchToken } from "./auth";
import { loadConfig } from "./config";
import { invalidVars, reasonsWhere } from "./config-invalid";
import { configInvalid, methodNotAllowed, unauthorized } from "./errors";
import { RequestLog } from "./log";

/**
 * A client-supplied request id is kept only if it looks like an id (it is echoed into logs and headers);
 * README states this rule as written here (middleware.test.ts holds them together).
 */
export const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** Request id, start time and the request's log line; emits the line unless a relayed stream will. */
export function requestContext(): MiddlewareHandler<GatewayEnv> {
  return async function requestContextMiddleware(c, next) {
    const startedAt = Date.now();
    const given = c.req.header("x-request-id");
    const fromClient = given !== undefined && SAFE_REQUEST_ID.test(given);
    const requestId = fromClient ? given : crypto.randomUUID();
    const log = new RequestLog(requestId, c.req.method, c.req.path, startedAt);
    c.set("requestId", requestId);
    c.set("requestIdFromClient", fromClient);
    c.set("startedAt", startedAt);
    c.set("log", log);
    await next();
    c.res.headers.set("x-request-id", requestId);
    if (!log.isDeferred || c.error !== undefined) log.emit(Date.now(), { status: c.res.status });
  };
}

/**
 * A method the route does not serve is a 405 naming the ones it does (`Allow`),
 * not a 404: the path exists. Routes that serve GET serve HEAD too (Hono answers
 * HEAD with the GET handler).
 */
export function allowMethods(...methods: string[]): MiddlewareHandler<GatewayEnv> {
  const allowed = methods.includes("GET") ? [...methods, "HEAD"] : methods;
  return async function allowMethodsMiddleware(c, next) {
    if (!allowed.includes(c.req.method)) throw methodNotAllowed(c.req.method, allowed);
    await next();
  };
}

/** Loads the validated config; an invalid one is a 503 naming each bad var, on every request. */
export function requireConfig(): MiddlewareHandler<GatewayEnv> {
  return async function requireConfigMiddleware(c, next) {
    const result = await loadConfig(c.env);
    if (!result.ok) {
      const vars = invalidVars(result.errors);
      throw configInvalid(vars, reasonsWhere(vars));
    }
    c.set("config", result.config);
    await next();
  };
}

/**
 * Client auth against GATEWAY_API_KEYS; the Authorization header is never forwarded upstream.
 * Sets which key it was (its id and limits, never the key) and logs the key's fingerprint.
 */
export function requireGatewayKey(): MiddlewareHandler<GatewayEnv> {
  return async function requireGatewayKeyMiddleware(c, next) {
    const config = c.get("config");
    const index = await matchToken(bearerToken(c.req.header("authorization")), config.gatewayKeyDigests);
    const key = config.gatewayKeys[index];
    if (key === undefined) throw unauthorized();
    c.set("gatewayKey", key);
    c.get("log").set({ key: key.id.slice(0, 8) });
    await next();
  };
}
