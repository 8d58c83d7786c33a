/**
 * The Worker side of the per-key limiters: the requests-per-period check on
 * the Workers Rate Limiting binding, and a slot from the key's KeyLimiterDO.
 * Neither ever fails a request: a limiter that throws, is not bound, or does
 * not answer within its deadline lets the request through and says why (the
 * data plane never fails for the control plane's sake).
 */
import { KEY_LIMITER_DEADLINE_MS, type LocationHint } from "../../routing/defaults";
import { deadline } from "../deadline";
import { placementOptions } from "../location-hint";
import type { AcquireResult, RenewResult } from "./key-limiter-rpc";

const TIMED_OUT = Symbol("timed out");

/** `p`, or TIMED_OUT after `ms`; a rejection before then is passed on. */
export function withDeadline<T>(p: PromiseLike<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  return deadline(p, ms, () => TIMED_OUT);
}

export type RateCheck = "allowed" | "limited" | "unbound" | "error";

/** One request against the key's counter. The binding answers from a local cache: no network wait. */
export async function checkRate(limiter: RateLimit | undefined, keyId: string): Promise<RateCheck> {
  if (limiter === undefined) return "unbound";
  try {
    const r = await withDeadline(limiter.limit({ key: keyId }), KEY_LIMITER_DEADLINE_MS);
    if (r === TIMED_OUT) return "error";
    return r.success ? "allowed" : "limited";
  } catch {
    return "error";
  }
}

export type SlotOutcome =
  | {
      readonly kind: "granted";
      readonly inflight: number;
      readonly slotId: string;
      release(): Promise<void>;
      /** Renews these slots of the key (this one and others this isolate holds) for the request's ttlMs. */
      renew(slotIds: readonly string[]): Promise<RenewResult>;
    }
  | { readonly kind: "refused"; readonly inflight: number }
  | { readonly kind: "fail_open"; readonly reason: "timeout" | "error"; release(): Promise<void> };

export interface SlotRequest {
  readonly keyId: string;
  readonly limit: number;
  readonly ttlMs: number;
  readonly deadlineMs?: number;
  /** ROUTER_LOCATION_HINT: where the key's KeyLimiterDO starts if this call creates it. */
  readonly locationHint?: LocationHint;
}

/**
 * Asks the key's KeyLimiterDO for a slot. The release and the renewals go
 * through the same stub, so they reach the object after the acquire (calls
 * on one stub are delivered in order); a failed release is swallowed: the
 * slot's TTL ends it.
 */
export async function acquireSlot(ns: Env["KEY_LIMITER"], req: SlotRequest): Promise<SlotOutcome> {
  const slotId = crypto.randomUUID();
  let stub: ReturnType<Env["KEY_LIMITER"]["getByName"]> | undefined;
  const release = async (): Promise<void> => {
    try {
      await stub?.release(slotId);
    } catch {
      // The object is unreachable: the slot expires at its deadline instead.
    }
  };
  let res: AcquireResult | typeof TIMED_OUT;
  try {
    const s = ns.getByName(req.keyId, placementOptions(req.locationHint));
    stub = s;
    const acquiring = (async (): Promise<AcquireResult> =>
      await s.acquire({ slotId, limit: req.limit, ttlMs: req.ttlMs }))();
    res = await withDeadline(acquiring, req.deadlineMs ?? KEY_LIMITER_DEADLINE_MS);
  } catch {
    return { kind: "fail_open", reason: "error", release };
  }
  if (res === TIMED_OUT) return { kind: "fail_open", reason: "timeout", release };
  if (res.ok) {
    // Granted: the acquire went through `stub`, so it is set.
    const held = stub!;
    const renew = async (slotIds: readonly string[]): Promise<RenewResult> =>
      await held.renew({ slotIds, limit: req.limit, ttlMs: req.ttlMs });
    return { kind: "granted", inflight: res.inflight, slotId, release, renew };
  }
  if (res.code === "limit_reached") return { kind: "refused", inflight: res.inflight };
  // invalid_input is a bug of ours, never the client's fault.
  return { kind: "fail_open", reason: "error", release };
}
