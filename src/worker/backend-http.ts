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

/**
 * A promise that rejects when `signal` aborts (at once if it has), never resolving: raced against a body's
 * reads, it ends a body that stalls mid-way at the deadline whether or not the runtime errors the stream on
 * abort. Its rejection is handled here, so an unraced one is no unhandled rejection.
 */
export function rejectsOnAbort(signal: AbortSignal): Promise<never> {
  const aborted = new Promise<never>((_, reject) => {
    const fail = () => reject(new Error("aborted"));
    if (signal.aborted) fail();
    else signal.addEventListener("abort", fail, { once: true });
  });
  aborted.catch(() => {});
  return aborted;
}

/**
 * Why a fetch to a backend failed, in words an operator page may show: a timeout names its stage, any other
 * failure the runtime's message with every URL in it replaced (/healthz and the stats name backends by id,
 * never by address), cut to 200 characters.
 */
export function fetchFailure(e: unknown, signal: AbortSignal, stage: string): string {
  if (signal.aborted) return `timeout (${stage})`;
  const msg = `${stage} failed: ${e instanceof Error ? e.message : String(e)}`;
  return msg.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, "<url>").slice(0, 200);
}
