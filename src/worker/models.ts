/** GET /v1/models: the models the fleet serves, in OpenAI's list shape (behind the gateway key). */
import type { Context } from "hono";
import type { GatewayEnv } from "./app-types";

export function listModels(c: Context<GatewayEnv>): Response {
  const data = c
    .get("config")
    .models.map((id) => ({ id, object: "model", created: 0, owned_by: "prefix-gateway" }));
  return c.json({ object: "list", data });
}
