/**
 * prefix-gateway: the Worker entry. Routes OpenAI-style requests to the GPU
 * backend most likely to hold their prompt prefix in KV cache.
 */
import { app } from "./app";

export { RouterDO } from "../durable-objects/router-do";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
