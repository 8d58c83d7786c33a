/**
 * The admin token guard of /admin/* and /metrics: `Authorization: Bearer
 * <ADMIN_TOKEN>`, compared in constant time as /healthz does (auth.ts). A
 * missing or wrong token is a 401 in OpenAI's error shape; nothing about the
 * fleet is said before it matches.
 */
import type { MiddlewareHandler } from "hono";
import type { GatewayEnv } from "../app-types";
import { bearerToken, tokenMatches } from "../auth";
import { GatewayError } from "../errors";

export const invalidAdminToken = () =>
  new GatewayError(
    401,
    "authentication_error",
    "invalid_admin_token",
    "Invalid or missing admin token. Send ADMIN_TOKEN as 'Authorization: Bearer <token>'.",
  );

/** Requires the admin token (after requireConfig, which sets the config). */
export function requireAdminToken(): MiddlewareHandler<GatewayEnv> {
  return async function requireAdminTokenMiddleware(c, next) {
    const token = bearerToken(c.req.header("authorization"));
    if (!(await tokenMatches(token, [c.get("config").adminTokenDigest]))) throw invalidAdminToken();
    await next();
  };
}
