/**
 * The RPC contract between the Worker and a RouterDO. Plain data only (RPC
 * drops error classes), every method returns a result union. Nothing here
 * carries a secret: backends travel with their url (the DO probes /health)
 * but never with their apiKey.
 *
 * Shard-agnostic: a RouterDO decides over the traffic it is given and never
 * assumes it sees all of a pool's requests; the Worker chooses the object.
 */
import type { RouterStats } from "../src/routing";
import type { PolicyName, RouteReason } from "../src/routing/types";

/** A backend as the DO knows it. */
export interface FleetBackend {
  readonly id: string;
  readonly url: string;
  readonly weight: number;
  readonly kvCacheTokens: number;
}

/** A pool's whole routing configuration; its hash is the fleet version. */
export interface PoolSpec {
  readonly backends: readonly FleetBackend[];
  readonly policy: PolicyName;
  readonly blockTokens: number;
  readonly balanceFactor: number;
  readonly leaseTtlSeconds: number;
  readonly healthProbeSeconds: number;
}

/** Why a lease ended badly; drives passive health. */
export type FailureKind = "connect_error" | "server_error" | "client_abort" | "stream_error";

export interface RouteInput {
  /** Hash of the PoolSpec the Worker holds. */
  readonly fleetVersion: string;
  /** Sent when the Worker is not sure the DO has this version (saves a round trip). */
  readonly spec?: PoolSpec;
  readonly blocks: readonly number[];
  readonly promptTokens: number;
  readonly outputTokens?: number;
  /** Re-route after `leaseId`'s backend failed before sending a byte: releases it, marks it unhealthy. */
  readonly retryOf?: { readonly leaseId: string; readonly failure: FailureKind };
}

export type RouteResult =
  | {
      readonly ok: true;
      readonly backendId: string;
      readonly leaseId: string;
      readonly reason: RouteReason;
      readonly expectedCachedTokens: number;
      readonly inflightAtDecision: number;
      readonly policy: PolicyName;
    }
  | {
      readonly ok: false;
      /** fleet_stale: call again with `spec`. no_healthy_backend: nothing to route to. */
      readonly code: "fleet_stale" | "no_healthy_backend" | "invalid_input";
      readonly message: string;
    };

export interface CompleteInput {
  /** The backend produced a response (any tokens). */
  readonly ok: boolean;
  /** HTTP status the backend answered with, if it answered. */
  readonly status?: number;
  readonly failure?: FailureKind;
  readonly promptTokens?: number;
  readonly cachedTokens?: number;
  readonly ttftMs?: number;
}

export type CompleteResult =
  | { readonly ok: true; readonly backendId: string }
  | { readonly ok: false; readonly code: "unknown_lease"; readonly message: string };

export interface BackendStatus {
  readonly id: string;
  readonly healthy: boolean;
  readonly inflight: number;
  /** When unhealthy: epoch ms of the next /health probe. */
  readonly nextProbeAt?: number;
  readonly consecutiveFailures: number;
}

/** What backends reported back through complete(), since this RouterDO instance started. */
export interface UsageTotals {
  readonly completed: number;
  readonly failed: number;
  readonly expired: number;
  /** Completions that carried usage (prompt_tokens_details.cached_tokens). */
  readonly withUsage: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
}

export type StatsResult =
  | {
      readonly ok: true;
      readonly fleetVersion: string;
      readonly policy: PolicyName;
      readonly leases: number;
      readonly backends: readonly BackendStatus[];
      readonly usage: UsageTotals;
      readonly router: RouterStats;
    }
  | { readonly ok: false; readonly code: "no_fleet"; readonly message: string };
