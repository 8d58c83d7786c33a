/**
 * GET /v1/models: the models the fleet serves, in OpenAI's list shape; GET /v1/models/{model}: one of
 * them, what the SDKs' `models.retrieve` asks for (both behind the gateway key).
 */
import type { Context } from "hono";
import type { GatewayEnv } from "./app-types";
import { requireModel } from "./errors";

function modelObject(id: string) {
  return { id, object: "model", created: 0, owned_by: "prefix-gateway" } as const;
}

export function listModels(c: Context<GatewayEnv>): Response {
  return c.json({ object: "list", data: c.get("config").models.map(modelObject) });
}

/** The route's `model` parameter may hold slashes (`org/name`), sent as is or percent-encoded. */
export function retrieveModel(c: Context<GatewayEnv>): Response {
  const id = c.req.param("model") ?? "";
  requireModel(c.get("config"), id);
  return c.json(modelObject(id));
}
