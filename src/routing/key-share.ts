/**
 * Who is shed when the bound on requests in flight binds (inflight-bound.ts):
 * max-min fairness between gateway keys over one cell's slots. Without it the
 * first come hold: one key that fills every slot (a flood, unread streams)
 * gets every other key a 429 for as long as it keeps them full, while its own
 * share stays at 100% (bench/results/red-team.md "slow-reader").
 *
 * The rule, for a first attempt of key x while some usable backend has room:
 * - no other key is contending (none holds a slot here, none asked within
 *   KEY_SHARE_WINDOW_MS): x may take every slot (work-conserving);
 * - x holds less than its fair share (slots / contending keys): admitted;
 * - otherwise x is admitted only while `headroom` slots stay free after it:
 *   those are kept for the keys below their share (a key holding nothing
 *   finds one at once, and a key above its share never takes a slot a key
 *   below it is waiting for).
 * Slots are not taken back (a stream in flight is never cut for fairness):
 * a key that holds every slot when another arrives keeps them until they end,
 * and from then on its own new requests are shed first, so each slot it frees
 * goes to the keys below their share until the shares even out.
 *
 * Counts are the cell's: each cell is its own RouterDO with its own backends,
 * so a share is of that cell's slots (a key may hold its share in every cell).
 * Pure: counts and time come in as arguments.
 */

import { type BoundedBackend, boundOf } from "./inflight-bound";

/** How long a key that asked counts as contending for slots, ms: the longest retry-after a shed client is told. */
export const KEY_SHARE_WINDOW_MS = 60_000;

/** Keys remembered as recently asking, at most; past it the oldest are forgotten first (bounded memory). */
export const KEY_SHARE_KEYS_KEPT = 4096;

/** The slots kept free for keys below their share: `percent` of `slots`, rounded up, so any percent keeps one. */
export function headroomSlots(slots: number, percent: number): number {
  if (percent <= 0 || slots <= 0) return 0;
  return Math.min(slots, Math.ceil((slots * percent) / 100));
}

/** What the verdict needs of one cell at one decision. */
export interface ShareInput {
  /** The cell's slots: the sum of its usable backends' bounds. */
  readonly slots: number;
  /** Requests in flight on those backends, every key's. */
  readonly inflight: number;
  /** Of them, the asking key's. */
  readonly held: number;
  /** Keys contending for slots, the asking key included (KeyDemand.contenders). */
  readonly contenders: number;
  /** Slots kept free for keys below their share (headroomSlots). */
  readonly headroom: number;
}

export type ShareVerdict =
  | { readonly admit: true; readonly reason: "alone" | "below_share" | "room" }
  | { readonly admit: false; readonly reason: "over_share"; readonly share: number };

/** The verdict on one first attempt (see the header). */
export function shareVerdict(s: ShareInput): ShareVerdict {
  if (s.headroom <= 0 || s.contenders <= 1) return { admit: true, reason: "alone" };
  const share = s.slots / s.contenders;
  if (s.held < share) return { admit: true, reason: "below_share" };
  if (s.slots - s.inflight - 1 >= s.headroom) return { admit: true, reason: "room" };
  return { admit: false, reason: "over_share", share: Math.max(1, Math.floor(share)) };
}

/**
 * The keys that asked this cell for a slot recently (admitted or shed), by when they last asked: a key shed
 * while another held every slot still counts as waiting when it comes back after its retry-after.
 */
export class KeyDemand {
  private readonly lastAsked = new Map<string, number>();

  constructor(
    private readonly windowMs = KEY_SHARE_WINDOW_MS,
    private readonly kept = KEY_SHARE_KEYS_KEPT,
  ) {}

  /** `key` asked at `now` (a Map keeps insertion order: re-inserted, it is the newest). */
  asked(key: string, now: number): void {
    this.lastAsked.delete(key);
    this.lastAsked.set(key, now);
    if (this.lastAsked.size > this.kept) {
      const oldest = this.lastAsked.keys().next().value;
      if (oldest !== undefined) this.lastAsked.delete(oldest);
    }
  }

  /**
   * How many keys contend for slots at `now`: `key` itself, every key holding a slot (`holders`), and every
   * key that asked within the window. Forgets keys whose window has passed.
   */
  contenders(key: string, now: number, holders: Iterable<string>): number {
    const seen = new Set<string>([key]);
    for (const k of holders) seen.add(k);
    for (const [k, at] of this.lastAsked) {
      if (now - at > this.windowMs) this.lastAsked.delete(k);
      else seen.add(k);
    }
    return seen.size;
  }
}

/**
 * A cell's slots and their use: the sum of the bounds of its usable backends, and the requests in flight on
 * them. Undefined when a usable backend is unbounded (its bound 0): the cell always has room there, the bound
 * never binds, and nobody is shed.
 */
export function cellSlots(
  backends: readonly BoundedBackend[],
  poolBound: number,
  usable: (id: string) => boolean,
  inflight: (id: string) => number,
): { slots: number; inflight: number } | undefined {
  let slots = 0;
  let used = 0;
  for (const b of backends) {
    if (!usable(b.id)) continue;
    const bound = boundOf(b, poolBound);
    if (bound <= 0) return undefined;
    slots += bound;
    used += Math.min(bound, inflight(b.id));
  }
  return { slots, inflight: used };
}
