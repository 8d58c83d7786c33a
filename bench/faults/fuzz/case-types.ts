/**
 * What the fuzz pass sends, as data: a fetch request (maybe left early), raw
 * bytes on a socket, or a burst of streams that all leave. The runners
 * (send.ts, raw.ts) judge what comes back within each case's bound.
 */
import type { Rng } from "../../../sim/workloads/prng";

/** A request sent with fetch; `leave` makes the client go away at a point of its own. */
export interface FetchCase {
  readonly kind: "fetch";
  readonly label: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Uint8Array;
  readonly leave?: { readonly afterMs?: number; readonly afterChunks?: number; readonly pauseMs?: number };
  readonly boundMs: number;
}

/** Bytes written to a socket as they are (with pauses), then closed, half-closed or left open. */
export interface RawCase {
  readonly kind: "raw";
  readonly label: string;
  readonly parts: readonly { readonly bytes: Uint8Array; readonly delayMs: number }[];
  /** `half-close`: end our side and wait for the answer; `close`: leave without waiting; `keep`: wait. */
  readonly end: "half-close" | "close" | "keep";
  readonly boundMs: number;
  /** The request's method (a HEAD answer has no body to judge). */
  readonly method: string;
  /** A method the runtime refuses before the Worker sees it (judge.ts Answer.runtimeMayRefuse). */
  readonly runtimeMayRefuse?: boolean;
  /**
   * A well-formed upload (upload.ts), which the gateway must answer: the connection closing with no
   * answer is a problem, unless the gateway's log shows it answered this x-request-id (a refusal whose
   * bytes the close destroyed) — not a refusal of bytes that were never HTTP.
   */
  readonly upload?: { readonly requestId: string };
}

/** Many streams at once, each left at a random point. */
export interface BurstCase {
  readonly kind: "burst";
  readonly label: string;
  readonly streams: readonly FetchCase[];
  readonly boundMs: number;
}

export type FuzzCase = FetchCase | RawCase | BurstCase;

export interface CaseKeys {
  /** The key fuzzed requests use (it has a max_concurrent of its own). */
  readonly fuzzKey: string;
  readonly adminToken: string;
}

/**
 * How long a request may go unanswered before it counts as a hang. Not the gateway's speed: a valid
 * body of a few hundred thousand prompt tokens is prefilled by the emulated engine for tens of
 * seconds (a grammar body of 842 KB was served 200 in 20.9 s sent alone, seed 4). Past the gateway's
 * own first-byte deadline (UPSTREAM_FIRST_BYTE_TIMEOUT_MS, 60 s), so a backend that never answers
 * shows as the gateway's 504 (a failure here), and a request the gateway itself holds as a hang.
 */
export const BOUND_MS = 75_000;
/** Bodies that stall wait BODY_IDLE_MS (30 s) for their next piece, then get a 408. */
export const STALL_BOUND_MS = 45_000;

export const pick = <T>(rng: Rng, items: readonly T[]): T => items[rng.int(0, items.length - 1)]!;
