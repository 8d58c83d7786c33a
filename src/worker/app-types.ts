/** The Hono environment of the gateway: bindings from wrangler, per-request variables set by middleware. */
import type { GatewayConfig, GatewayKey } from "./config";
import type { RequestLog } from "./log";
import type { ParsedBody } from "./request/request-body";

export interface GatewayVariables {
  requestId: string;
  /** The client sent requestId (x-request-id) itself: the backend gets it made unique (upstream-request-id.ts). */
  requestIdFromClient: boolean;
  /** Date.now() when the request arrived. */
  startedAt: number;
  log: RequestLog;
  /** Set by the config middleware on /v1/*; invalid config never reaches a handler. */
  config: GatewayConfig;
  /** Set by the auth middleware on /v1/*: which configured key the client sent. */
  gatewayKey: GatewayKey;
  /** Set on the inference routes once the body is whole and valid (inference-request.ts inferenceBody). */
  inferenceBody: ParsedBody;
}

export interface GatewayEnv {
  Bindings: Env;
  Variables: GatewayVariables;
}
