/**
 * How the gateway speaks to a backend outside a request's body: the three calls it makes there (a request,
 * the RouterDO's health probe, the /metrics scrape) send the same credentials and read the same two
 * answers as the backend's fault, so that none of them treats a backend differently from the others.
 */

/** The `authorization` header for a backend's BACKENDS apiKey (none when it has no key). */
export function backendAuthorization(apiKey: string | undefined): Record<string, string> {
  return apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` };
}

/**
 * A 3xx. Never followed (every call passes `redirect: "manual"`): a redirect would carry the key, or a
 * client's prompt, to an address BACKENDS never named. A backend that redirects is misconfigured.
 */
export function isRedirect(status: number): boolean {
  return status >= 300 && status < 400;
}

/**
 * A 401 or 403: the backend refusing the key the gateway sent it (a wrong or missing BACKENDS apiKey, a
 * proxy's access rule). The client's own credentials never go upstream, so it is never about the client.
 */
export function refusesCredentials(status: number): boolean {
  return status === 401 || status === 403;
}
