/**
 * The gateway's HTTP surface (Hono). Every error, from any handler or
 * middleware, is rendered here once, in OpenAI's error shape.
 */
import { Hono } from "hono";
import { adminStats, drainHandler, listBackends, metrics, resetAffinity } from "./admin/admin-api";
import { requireAdminToken } from "./admin/admin-auth";
import { dashboardFile, dashboardPage } from "./admin/dashboard";
import type { GatewayEnv } from "./app-types";
import { cors } from "./cors/cors";
import { errorBody, routeNotFound, toGatewayError } from "./errors";
import { healthz } from "./healthz";
import { inferenceHandler } from "./inference/handler";
import { inferenceBody } from "./inference/inference-request";
import { keyConcurrency, keyRateLimit } from "./key-limits/key-limits";
import { allowMethods, requestContext, requireConfig, requireGatewayKey } from "./middleware";
import { listModels, retrieveModel } from "./models";

export const app = new Hono<GatewayEnv>();

app.use("*", requestContext());
// Opt-in CORS for browser pages (CORS_ALLOW_ORIGINS), on the client API only (cors/cors.ts says why): outside
// every other /v1 middleware, so its headers reach errors too, and before the method check (a preflight is an OPTIONS).
app.use("/v1/*", cors());
// Wrong method on a known route: 405 with Allow, before auth (the route table is no secret).
app.use("/healthz", allowMethods("GET"));
app.use("/v1/models", allowMethods("GET"));
app.use("/v1/models/:model{.+}", allowMethods("GET"));
app.use("/v1/chat/completions", allowMethods("POST"));
app.use("/v1/completions", allowMethods("POST"));
app.use("/metrics", allowMethods("GET"));
app.use("/admin/stats", allowMethods("GET"));
app.use("/admin/backends", allowMethods("GET"));
app.use("/admin/backends/:id/:action{drain|undrain}", allowMethods("POST"));
app.use("/admin/pools/:model/reset-affinity", allowMethods("POST"));
app.use("/admin/dashboard", allowMethods("GET"));
app.use("/admin/dashboard/:file", allowMethods("GET"));

app.get("/healthz", healthz);
app.use("/v1/*", requireConfig(), requireGatewayKey());
app.get("/v1/models", listModels);
app.get("/v1/models/:model{.+}", retrieveModel);
// Per-key limits guard the routes that occupy the fleet: the rate as a request arrives, a concurrency slot
// once its body is whole and valid (a body still uploading holds none; a bad one is told its 400, not a 429).
const rate = keyRateLimit();
const slot = keyConcurrency();
app.post("/v1/chat/completions", rate, inferenceBody("chat"), slot, inferenceHandler("chat"));
app.post("/v1/completions", rate, inferenceBody("completions"), slot, inferenceHandler("completions"));

// The admin API: fleet-wide figures and an operator's changes, under the admin token. The dashboard page
// and its files hold no data (its script asks for the token and calls /admin/stats with it).
const admin = [requireConfig(), requireAdminToken()] as const;
app.get("/metrics", ...admin, metrics);
app.get("/admin/stats", ...admin, adminStats);
app.get("/admin/backends", ...admin, listBackends);
app.post("/admin/backends/:id/drain", ...admin, drainHandler(true));
app.post("/admin/backends/:id/undrain", ...admin, drainHandler(false));
app.post("/admin/pools/:model/reset-affinity", ...admin, resetAffinity);
app.get("/admin/dashboard", dashboardPage);
app.get("/admin/dashboard/:file", dashboardFile);

/** The client API above, as a 404 for any other path names it (the admin API is README's to tell). */
const CLIENT_API =
  "POST /v1/chat/completions, POST /v1/completions, GET /v1/models and GET /v1/models/{model}";

app.notFound((c) => c.json(errorBody(routeNotFound(c.req.method, c.req.path, CLIENT_API)), 404));

app.onError((err, c) => {
  const e = toGatewayError(err, c.get("requestId") ?? "unknown");
  // Unexpected errors keep their message in the log line (never in the response); typed ones log their code.
  c.get("log")?.set({
    error: e.code === "internal_error" && err instanceof Error ? `${err.name}: ${err.message}` : e.code,
  });
  return c.json(errorBody(e), e.status, e.headers);
});
