/**
 * GET /admin/dashboard and its files: one page, served by the Worker from
 * its own bundle (no CDN), whose script asks for the admin token in a form
 * and keeps it in memory (dashboard/app.js). The page and its files hold no
 * fleet data, so they are public; every figure comes from /admin/stats,
 * which needs the token. A strict Content-Security-Policy allows only the
 * page's own files and calls to its own origin. Charts: uPlot (~50 KB).
 */
import type { Context } from "hono";
import uplotJs from "uplot/dist/uPlot.iife.min.js";
import uplotCss from "uplot/dist/uPlot.min.css";
import type { GatewayEnv } from "../app-types";
import { GatewayError, quoteClient } from "../errors";
import appJs from "./dashboard/app.js";
import pageCss from "./dashboard/dashboard.css";
import pageHtml from "./dashboard/dashboard.html";

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const FILES: Readonly<Record<string, { readonly body: string; readonly type: string }>> = {
  "app.js": { body: appJs, type: "text/javascript; charset=utf-8" },
  "uplot.js": { body: uplotJs, type: "text/javascript; charset=utf-8" },
  "uplot.css": { body: uplotCss, type: "text/css; charset=utf-8" },
  "dashboard.css": { body: pageCss, type: "text/css; charset=utf-8" },
};

function headers(type: string): Record<string, string> {
  return {
    "content-type": type,
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
  };
}

/** GET /admin/dashboard: the page. */
export function dashboardPage(c: Context<GatewayEnv>): Response {
  return c.body(pageHtml, 200, headers("text/html; charset=utf-8"));
}

/** GET /admin/dashboard/:file: its script, uPlot and the stylesheets; anything else is a 404. */
export function dashboardFile(c: Context<GatewayEnv>): Response {
  const name = c.req.param("file") ?? "";
  const file = Object.hasOwn(FILES, name) ? FILES[name] : undefined;
  if (file === undefined)
    throw new GatewayError(
      404,
      "invalid_request_error",
      "not_found",
      `No dashboard file '${quoteClient(name)}'.`,
    );
  return c.body(file.body, 200, headers(file.type));
}
