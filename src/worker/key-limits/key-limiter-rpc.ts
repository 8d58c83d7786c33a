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
  /** A slot whose release never arrives (crashed isolate, lost RPC) ends this long after it was granted or renewed. */
  readonly ttlMs: number;
}

/** Renews the slots one isolate still holds for the key (slot-renewal.ts: one call per key per period). */
export interface RenewInput {
  readonly slotIds: readonly string[];
  /** A slot that has already expired is granted again only while the key holds fewer than this. */
  readonly limit: number;
  /** Each renewed slot now ends this long after the renewal. */
  readonly ttlMs: number;
}

export type RenewResult =
  | {
      readonly ok: true;
      /** Slots still held, whose deadline moved. */
      readonly renewed: number;
      /** Slots that had expired (renewals lost) and were granted again because the key had room. */
      readonly regranted: number;
      /** Slots that had expired and found the key full: their streams go on uncounted (fail open). */
      readonly lost: number;
      readonly inflight: number;
    }
  | {
      readonly ok: false;
      readonly code: "invalid_input";
      readonly inflight: number;
      readonly message: string;
    };

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
  /** Slots whose deadline a renewal moved (a renewal of n slots counts n). */
  readonly renewed: number;
}
