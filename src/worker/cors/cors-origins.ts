/**
 * CORS_ALLOW_ORIGINS → which browser origins may call the client API, and
 * what a response tells a given origin. Pure: config.ts validates the var
 * with it at the edge, cors.ts answers with it.
 *
 * Exact origins only (`scheme://host[:port]`, as a browser sends them in
 * `Origin`), or `*` alone; empty = off. No patterns: a wildcard that matched
 * one subdomain too many would hand a page on it the answers of every key
 * typed into it, and exact lists are what an operator can read and audit.
 */

/** What the operator allowed: nothing (the default), any origin, or these exact ones. */
export type CorsOrigins =
  | { readonly mode: "off" }
  | { readonly mode: "any" }
  | { readonly mode: "list"; readonly origins: ReadonlySet<string> };

export type CorsOriginsResult =
  | { ok: true; cors: CorsOrigins }
  /** Each issue names the entry by its position in the list (`[1]`), or the whole var (no index). */
  | { ok: false; issues: { index?: number; message: string }[] };

/** An entry is echoed in its error (origins are not secrets), cut to this many characters. */
const ECHO_CHARS = 100;

/** Parses and validates the var's raw text; never throws. */
export function parseCorsOrigins(raw: string): CorsOriginsResult {
  const text = raw.trim();
  if (text === "") return { ok: true, cors: { mode: "off" } };
  // Empty entries (a stray or trailing comma) are skipped, as GATEWAY_API_KEYS skips them; an entry's
  // position in an error counts them, so it is where the operator finds it.
  const all = text.split(",").map((s) => s.trim());
  const entries = all.filter((s) => s !== "");
  if (entries.length === 0)
    return {
      ok: false,
      issues: [{ message: "must be empty (off), * or a comma-separated list of origins" }],
    };
  if (entries.includes("*")) {
    if (entries.length === 1) return { ok: true, cors: { mode: "any" } };
    return { ok: false, issues: [{ message: "* must stand alone (it already allows every origin)" }] };
  }
  const issues: { index: number; message: string }[] = [];
  all.forEach((entry, index) => {
    if (entry === "") return;
    const message = originIssue(entry);
    if (message !== undefined) issues.push({ index, message });
  });
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, cors: { mode: "list", origins: new Set(entries) } };
}

/** Why `entry` is not an origin a browser could send, or undefined if it is one. */
function originIssue(entry: string): string | undefined {
  const shown = JSON.stringify(entry.slice(0, ECHO_CHARS));
  // Any page can send `null` (sandboxed iframes, file://, some redirects): allowing it allows everyone.
  if (entry.toLowerCase() === "null")
    return "null is the origin of sandboxed and file:// pages, which any site can produce: it cannot be allowed";
  // URL parses `https://*.example.com` as a host named `*.example.com`, which no browser sends: say so.
  if (entry.includes("*"))
    return `${shown} has a wildcard: list each origin exactly, or set * alone for every origin`;
  const url = URL.parse(entry);
  if (url === null || (url.protocol !== "http:" && url.protocol !== "https:"))
    return `${shown} is not an http(s) origin like https://app.example.com`;
  // What the browser sends is the URL's serialised origin: lowercase host, no default port, no path, no slash.
  if (url.origin !== entry)
    return `${shown} is not an origin as browsers send it (scheme://host[:port], no path or trailing slash): ${JSON.stringify(url.origin)}?`;
  return undefined;
}

/**
 * The Access-Control-Allow-Origin value for a request from `origin` (its
 * `Origin` header), or undefined: no CORS headers, and the browser withholds
 * the answer from the page. An unlisted origin is never reflected.
 */
export function allowOriginFor(cors: CorsOrigins, origin: string | undefined): string | undefined {
  switch (cors.mode) {
    case "off":
      return undefined;
    // Nothing in the answer depends on the origin, so `*` is sent to every request, with or without one.
    case "any":
      return "*";
    case "list":
      return origin !== undefined && cors.origins.has(origin) ? origin : undefined;
  }
}
