/**
 * The RPC contract between the Worker and a KeyLimiterDO (one object per
 * gateway key, named by the key's fingerprint, never by the key); types
 * only, implemented by durable-objects/key-limiter-do.ts. Plain data
 * only, every method returns a result union: RPC drops error classes.
 */

export interface AcquireInput {
  /** Chosen by the Worker, so it can release a slot whose grant it never heard (a timed-out acquire). */
  readonly slotId: string;
  /** Slots this key may hold; the Worker's config decides, so a changed limit applies on the next request. */
  readonly limit: number;
  /** A slot whose release never arrives (crashed isolate, lost RPC) ends this long after it was granted. */
  readonly ttlMs: number;
}

export type AcquireResult =
  | { readonly ok: true; readonly inflight: number }
  | {
      readonly ok: false;
      /** limit_reached: the key holds `limit` slots already. invalid_input: a Worker bug, never the client's. */
      readonly code: "limit_reached" | "invalid_input";
      readonly inflight: number;
      readonly message: string;
    };

export type ReleaseResult =
  | { readonly ok: true; readonly inflight: number }
  /** Already released, expired, or never granted: harmless, a release is idempotent. */
  | {
      readonly ok: false;
      readonly code: "unknown_slot";
      readonly inflight: number;
      readonly message: string;
    };

/** Counts since this instance started, and the slots held now. */
export interface KeyLimiterStats {
  readonly ok: true;
  readonly inflight: number;
  readonly acquired: number;
  readonly refused: number;
  readonly released: number;
  readonly expired: number;
}
