/**
 * What load this router did not place costs a new request on a backend:
 * the part of what the engine reports running and waiting that is not this
 * router's own — other clients, other gateways, traffic sent around the
 * gateway. The cost model (cost-model.ts) sees only the router's own
 * leases; this term, added to it by prefix_aware, and the count of foreign
 * requests its shared-prefix cap adds to its own (`requests`,
 * shared-prefixes.ts) are where the policy reads engine state
 * (FleetView.engineSignals), both through foreignRequests.
 *
 * Model, for backend i and its latest reading r (running, waiting, and the
 * router's own requests in flight there when r was taken):
 *
 *   foreign = max(0, r.running + r.waiting − r.ownInflight)
 *   queued  = foreign · r.waiting / (r.running + r.waiting)
 *   extraMs = queued · prefillMs_i + (foreign − queued) · decodeMs_i
 *
 * - queued: the foreign requests waiting for admission, taken pro rata (a
 *   reading does not say whose requests wait). vLLM's scheduler admits
 *   first come first served, so each is prefilled before a request routed
 *   now: prefillMs_i is one request's prefill, estimated as the mean
 *   uncached prompt of the requests this router placed (the only prompt
 *   sizes it knows) at backend i's learned prefill rate.
 * - the rest run: each slows every engine step and holds a slot, as one of
 *   the router's own in-flight requests does (decodeMs_i: the cost model's
 *   decodeMsPerInflight per unit of relative weight).
 *
 * A reading older than maxAgeMs, or without ownInflight (the router could
 * not tell its own load, which it already counts, from the rest), adds
 * nothing: a stale or failed scrape leaves the cost model as it is without
 * signals. So does a reading where the engine holds no more than the
 * router's own requests (requests still in transit, or finished but not yet
 * reported, make the engine's count the smaller one).
 */
import type { PrefillCostModel } from "./cost-model";
import type { BackendSpec, EngineSignals, FleetView } from "./types";

export interface ForeignLoadOptions {
  /** Engine readings older than this are ignored, ms. Default DEFAULT_ENGINE_SIGNAL_MAX_AGE_MS. */
  readonly engineSignalMaxAgeMs?: number;
}

/** Three intervals of a one-second scrape (defaults.ts engineSignalMaxAgeMs); callers pass their own. */
export const DEFAULT_ENGINE_SIGNAL_MAX_AGE_MS = 3000;

/** EWMA weight of one routed request's uncached prompt in the mean that sizes a foreign request. */
const MEAN_ALPHA = 0.05;

/**
 * Requests in `r` that this router did not place (`total`, the model's `foreign`), split into queued and
 * running; zero when unusable. The cost term below and the shared-prefix cap
 * (policies/prefix-aware.ts) both read it: one reading of foreign load, not two.
 */
export function foreignRequests(
  r: EngineSignals | undefined,
  now: number,
  maxAgeMs: number,
): { readonly queued: number; readonly running: number; readonly total: number } {
  const none = { queued: 0, running: 0, total: 0 };
  if (r === undefined || r.ownInflight === undefined || !(now - r.sampledAt <= maxAgeMs)) return none;
  const total = r.running + r.waiting;
  const foreign = total - r.ownInflight;
  if (!(foreign > 0) || !(total > 0)) return none;
  const queued = (foreign * r.waiting) / total;
  return { queued, running: foreign - queued, total: foreign };
}

/** extraMs of the model above, for one reading. */
export function foreignLoadMs(
  r: EngineSignals | undefined,
  now: number,
  maxAgeMs: number,
  prefillMsPerRequest: number,
  decodeMsPerRequest: number,
): number {
  const f = foreignRequests(r, now, maxAgeMs);
  return f.queued * prefillMsPerRequest + f.running * decodeMsPerRequest;
}

export class ForeignLoad {
  readonly maxAgeMs: number;
  /** Mean uncached prompt tokens of the requests this router placed (0 until the first). */
  private meanUncached = 0;
  private seen = false;
  private weightsOf: readonly BackendSpec[] | undefined;
  private meanWeight = 1;

  constructor(options: ForeignLoadOptions = {}) {
    const age = options.engineSignalMaxAgeMs ?? DEFAULT_ENGINE_SIGNAL_MAX_AGE_MS;
    if (!(age > 0)) throw new RangeError(`engineSignalMaxAgeMs must be > 0, got ${age}`);
    this.maxAgeMs = age;
  }

  /** A request was routed with this many uncached prompt tokens on its backend. */
  observeRouted(uncachedTokens: number): void {
    if (!this.seen) {
      this.meanUncached = uncachedTokens;
      this.seen = true;
    } else this.meanUncached += MEAN_ALPHA * (uncachedTokens - this.meanUncached);
  }

  /**
   * Requests backend i's latest reading `r` holds beyond ours (0 without a usable reading: none, stale, or
   * without ownInflight), as the shared-prefix cap counts them.
   */
  requests(r: EngineSignals | undefined, now: number): number {
    return foreignRequests(r, now, this.maxAgeMs).total;
  }

  /** The foreign-load term of backend i's cost, by its reading `r`, ms (0 without a usable reading). */
  costMs(
    fleet: FleetView,
    r: EngineSignals | undefined,
    i: number,
    now: number,
    model: PrefillCostModel,
  ): number {
    if (r === undefined) return 0;
    const prefillMs = this.meanUncached / (model.prefillTokensPerSec(i) / 1000);
    const decodeMs =
      (model.decodeMsPerInflight * this.meanWeightOf(fleet.backends)) / fleet.backends[i]!.weight;
    return foreignLoadMs(r, now, this.maxAgeMs, prefillMs, decodeMs);
  }

  private meanWeightOf(backends: readonly BackendSpec[]): number {
    if (this.weightsOf !== backends) {
      this.meanWeight = backends.reduce((a, b) => a + b.weight, 0) / Math.max(1, backends.length);
      this.weightsOf = backends;
    }
    return this.meanWeight;
  }
}
