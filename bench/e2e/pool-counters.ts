/**
 * What the gateway's RouterDO counted over an arm, read from GET /admin/stats
 * once the replay is over: ejections and restorations (did outlier detection
 * hold a backend out?), leases that expired (completions that never came),
 * outcomes observed from the Worker's local decisions (route calls that
 * missed ROUTER_TIMEOUT_MS), and the backends out of rotation at the end.
 * Placement alone does not explain a backend that served nothing; these do
 * or rule it out.
 */
import { mean } from "../../sim/stats";

export interface GatewayPoolState {
  readonly ejections: number;
  readonly restorations: number;
  readonly expired: number;
  /** Outcomes of requests the Worker decided alone (the RouterDO did not answer in time). */
  readonly observed: number;
  readonly retried: number;
  /** Backends ejected by outlier detection when the stats were read. */
  readonly outOfRotation: readonly string[];
  /**
   * The prefill rate the policy had learned from the TTFTs it saw, tokens/s per wall second, mean over
   * the backends (absent for policies that learn none): set it beside the emulators' configured rate × speed.
   */
  readonly learnedPrefillTokensPerSec?: number;
}

function count(v: unknown, what: string): number {
  if (typeof v !== "number" || !Number.isFinite(v)) throw new Error(`/admin/stats: ${what} is not a number`);
  return v;
}

/** The one pool of /admin/stats' body (the replay serves one model). Throws on any other shape. */
export function poolStateOf(body: unknown, model: string): GatewayPoolState {
  const pools = (body as { pools?: Record<string, unknown> } | null)?.pools;
  const pool = pools?.[model] as
    | {
        ok?: boolean;
        counters?: Record<string, unknown>;
        backends?: { id: string; healthy: boolean; prefillTokensPerSec?: unknown }[];
      }
    | undefined;
  if (pool?.ok !== true || pool.counters === undefined || !Array.isArray(pool.backends))
    throw new Error(`/admin/stats: no readable pool for model ${model}: ${JSON.stringify(pool ?? null)}`);
  const c = pool.counters;
  const rates = pool.backends
    .filter((b) => b.prefillTokensPerSec !== undefined)
    .map((b) => count(b.prefillTokensPerSec, `${b.id}.prefillTokensPerSec`));
  return {
    ejections: count(c.ejections, "ejections"),
    restorations: count(c.restorations, "restorations"),
    expired: count(c.expired, "expired"),
    observed: count(c.observed, "observed"),
    retried: count(c.retried, "retried"),
    outOfRotation: pool.backends.filter((b) => !b.healthy).map((b) => b.id),
    ...(rates.length > 0 ? { learnedPrefillTokensPerSec: mean(rates) } : {}),
  };
}

export async function readPoolState(
  gatewayUrl: string,
  adminToken: string,
  model: string,
): Promise<GatewayPoolState> {
  const res = await fetch(`${gatewayUrl}/admin/stats`, {
    headers: { authorization: `Bearer ${adminToken}` },
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`/admin/stats: HTTP ${res.status}`);
  return poolStateOf(await res.json(), model);
}

export function describePoolState(s: GatewayPoolState): string {
  const out = s.outOfRotation.length > 0 ? s.outOfRotation.join(", ") : "none";
  const rate =
    s.learnedPrefillTokensPerSec !== undefined
      ? `; learned prefill rate at the end ${Math.round(s.learnedPrefillTokensPerSec)} tok/s (wall)`
      : "";
  return `ejections ${s.ejections}, restorations ${s.restorations}, leases expired ${s.expired}, local decisions observed ${s.observed}, retries ${s.retried}; out of rotation at the end: ${out}${rate}`;
}
