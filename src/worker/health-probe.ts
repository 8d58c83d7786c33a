/**
 * The health probe of an ejected backend, the RouterDO's and the Worker's
 * (its local router probes the backends it ejected itself while the RouterDO
 * is out of reach: router-client.ts probeOwnEjections): is it fit to take
 * requests again? It treats the backend the way a request does
 * (src/worker/inference/upstream.ts):
 * - it sends the backend's BACKENDS apiKey, when one is set (a proxy in
 *   front of the engine may guard /health too: probed without it, such a
 *   backend, once ejected, never came back);
 * - it never follows a redirect (`redirect: "manual"`): a 3xx is a failed
 *   probe, as it is a failed request, and the key never goes to an address
 *   BACKENDS did not name;
 * - `GET /health` must answer 2xx; then (`checkCredentials`: the RouterDO
 *   knows the backend's BACKENDS entry, so the key requests carry) `GET
 *   /v1/models`, with that key or none, must not answer 401/403 (or a 3xx).
 *   vLLM and SGLang guard /v1 with
 *   their API key and leave /health open, so /health alone restored a
 *   backend whose key in BACKENDS was wrong (or missing): every request
 *   there was refused, it was ejected again after EJECT_AFTER_FAULTS
 *   retried requests, restored again, and so on (bench/results/red-team.md,
 *   third pass). Any other answer to /v1/models (a 404 from a server without
 *   it, a 500) leaves the verdict to /health.
 * Bounds: both calls within one `timeoutMs`; no body is read (each is
 * cancelled at its headers).
 */
import { backendAuthorization, isRedirect, refusesCredentials } from "./backend-http";

/** A probe (/health, then /v1/models) must end within this, ms, or it counts as a failure: the RouterDO's and the Worker's local ones. */
export const PROBE_TIMEOUT_MS = 2000;

export interface ProbeOptions {
  /** The whole probe (both calls) must end within this, ms. */
  readonly timeoutMs: number;
  /** The backend's BACKENDS apiKey, sent as `Authorization: Bearer`. */
  readonly apiKey?: string;
  /**
   * Also ask `/v1/models` with `apiKey` (or none when it is unset, as requests then go): set when the prober
   * knows the key requests carry. Unset, /health alone decides.
   */
  readonly checkCredentials?: boolean;
  /** The fetch to use (the runtime's by default). */
  readonly fetch?: typeof fetch;
}

export type ProbeResult = { readonly healthy: true } | { readonly healthy: false; readonly reason: string };

export async function probeBackend(url: string, o: ProbeOptions): Promise<ProbeResult> {
  const signal = AbortSignal.timeout(o.timeoutMs);
  const headers = backendAuthorization(o.apiKey);
  const get = async (path: string): Promise<number> => {
    const res = await (o.fetch ?? fetch)(`${url}${path}`, { headers, signal, redirect: "manual" });
    await res.body?.cancel().catch(() => {});
    return res.status;
  };
  try {
    const health = await get("/health");
    if (isRedirect(health)) return { healthy: false, reason: `/health answered ${health}, a redirect` };
    if (health < 200 || health >= 300) return { healthy: false, reason: `/health answered ${health}` };
    if (o.checkCredentials !== true) return { healthy: true };
    const models = await get("/v1/models");
    if (refusesCredentials(models))
      return { healthy: false, reason: `/v1/models refused the gateway's credentials (${models})` };
    if (isRedirect(models)) return { healthy: false, reason: `/v1/models answered ${models}, a redirect` };
    return { healthy: true };
  } catch (e) {
    return {
      healthy: false,
      reason: signal.aborted
        ? "timeout"
        : `failed: ${e instanceof Error ? e.message : String(e)}`.slice(0, 200),
    };
  }
}
