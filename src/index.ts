/**
 * prefix-gateway: the Worker entry. Routes OpenAI-style requests to the GPU
 * backend most likely to hold their prompt prefix in KV cache.
 * Durable Objects: RouterDO (one per model pool), KeyLimiterDO (one per gateway key).
 */
import { app } from "./worker/app";

export { KeyLimiterDO } from "../durable-objects/key-limiter-do";
export { RouterDO } from "../durable-objects/router-do";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
