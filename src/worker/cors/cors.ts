/**
 * Opt-in CORS on the client API (/v1/*), so that a browser page on an origin
 * the operator listed in CORS_ALLOW_ORIGINS (a playground, an internal tool)
 * can call the gateway with a gateway key. Off by default: then this
 * middleware does nothing at all.
 *
 * Not on the admin API, /metrics or the dashboard: the admin token changes
 * the fleet (drain, reset), and a page that could send it from another origin
 * would put it in that page's script. The dashboard is served by the Worker
 * itself, same-origin, and needs no CORS; Prometheus is not a browser.
 * Not on /healthz either: it is for monitors, which are not browsers.
 *
 * A request from an origin that is not listed is handled exactly as with
 * CORS off (a preflight stays a 405): it gets no CORS headers, so the browser
 * withholds the answer from the page.
 */
import type { MiddlewareHandler } from "hono";
import { CORS_MAX_AGE_SECONDS } from "../../routing/defaults";
import type { GatewayEnv } from "../app-types";
import { loadConfig } from "../config";
import { allowOriginFor } from "./cors-origins";

/** The methods the client API serves (GET, HEAD and POST need no preflight; said for clarity). */
export const CORS_ALLOW_METHODS = "GET, HEAD, POST";

/**
 * Request headers a page may send. Browsers do not let `*` stand for
 * Authorization, and an OpenAI SDK in a browser (openai 7.x,
 * `dangerouslyAllowBrowser`) sends these: the key, the JSON body's type,
 * its telemetry (`x-stainless-*`: client.js buildHeaders and
 * internal/detect-platform.js; cors-origins.test.ts checks the SDK's list
 * against this one) and OpenAI-Organization/-Project when set. Plus the
 * gateway's own request headers: a client's request id and the tenant key.
 */
export const CORS_ALLOW_HEADERS = [
  "authorization",
  "content-type",
  "x-request-id",
  "x-prefix-cache-key",
  "openai-organization",
  "openai-project",
  "x-stainless-arch",
  "x-stainless-custom-poll-interval",
  "x-stainless-helper-method",
  "x-stainless-lang",
  "x-stainless-os",
  "x-stainless-package-version",
  "x-stainless-poll-helper",
  "x-stainless-retry-count",
  "x-stainless-runtime",
  "x-stainless-runtime-version",
  "x-stainless-timeout",
] as const;

/**
 * Response headers a page may read beyond the CORS-safelisted ones
 * (content-type and the like): the gateway's own (README "Response headers";
 * set in middleware.ts and inference/respond.ts) and the backend's that
 * respond.ts passes on. The SDKs read retry-after (when to retry a 429) and
 * x-request-id (`_request_id`).
 */
export const CORS_EXPOSE_HEADERS = [
  "x-request-id",
  "x-prefix-gateway-backend",
  "x-prefix-gateway-route",
  "x-prefix-gateway-cached-tokens-expected",
  "x-prefix-gateway-upstream-request-id",
  "retry-after",
  "openai-processing-ms",
  "x-ratelimit-remaining-requests",
] as const;

/**
 * Answers a listed origin's preflight (204) and puts Allow-Origin and
 * Expose-Headers on every answer to it: errors (401, 404, 429, 503), streams
 * and all. Registered before the method check (a preflight is an OPTIONS)
 * and before auth (a preflight carries no key).
 */
export function cors(): MiddlewareHandler<GatewayEnv> {
  return async function corsMiddleware(c, next) {
    const result = await loadConfig(c.env);
    // An invalid config is answered as without CORS: the 503 that names the field comes from requireConfig.
    if (!result.ok || result.config.cors.mode === "off") return next();
    const policy = result.config.cors;
    const origin = c.req.header("origin");
    const allowOrigin = allowOriginFor(policy, origin);
    if (
      allowOrigin !== undefined &&
      origin !== undefined &&
      isPreflight(c.req.method, c.req.header(PREFLIGHT))
    ) {
      return c.body(null, 204, {
        "access-control-allow-origin": allowOrigin,
        "access-control-allow-methods": CORS_ALLOW_METHODS,
        "access-control-allow-headers": CORS_ALLOW_HEADERS.join(", "),
        "access-control-max-age": String(CORS_MAX_AGE_SECONDS),
        ...(policy.mode === "list" ? { vary: "Origin" } : {}),
      });
    }
    await next();
    const headers = c.res.headers;
    // The answer differs by Origin (listed or not): a cache must not hand one origin's answer to another.
    if (policy.mode === "list") addVaryOrigin(headers);
    if (allowOrigin === undefined) return;
    headers.set("access-control-allow-origin", allowOrigin);
    headers.set("access-control-expose-headers", CORS_EXPOSE_HEADERS.join(", "));
  };
}

const PREFLIGHT = "access-control-request-method";

/** A CORS preflight: OPTIONS naming the method the page wants to send (the Origin is checked by the caller). */
function isPreflight(method: string, requestMethod: string | undefined): boolean {
  return method === "OPTIONS" && requestMethod !== undefined;
}

function addVaryOrigin(headers: Headers): void {
  const vary = headers.get("vary");
  if (vary === null) headers.set("vary", "Origin");
  else if (!/(^|,)\s*(origin|\*)\s*(,|$)/i.test(vary)) headers.set("vary", `${vary}, Origin`);
}
