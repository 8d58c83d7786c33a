/**
 * The local-development secrets published in `.dev.vars.example` (a test
 * keeps these equal to the file). The Deploy to Cloudflare button offers
 * that file's values when it asks for the secrets, so a one-click deploy
 * could go live with a gateway key and an admin token anyone can read here.
 * Config refuses them once BACKENDS reaches beyond this machine; against
 * loopback backends (`npm run dev`, the benches) they stay valid.
 */

export const EXAMPLE_ADMIN_TOKEN = "pgw-local-admin-token";
export const EXAMPLE_GATEWAY_KEY = "pgw-local-dev-key";

/** A backend url on this machine: localhost, 127.0.0.0/8, ::1. */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  return host === "localhost" || host === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(host);
}
