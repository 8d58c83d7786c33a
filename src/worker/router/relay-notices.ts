/**
 * Notices that this isolate is relaying a backend's answer bytes, waiting to reach the backend's RouterDO
 * (RouterDO.relaying(), progress()). The RouterDO hears lease ends; a long-decoding fleet (answers of minutes)
 * can have none on a backend for a whole first-event window while it streams tokens to clients through other
 * isolates, and an isolate waiting there that relays nothing from it would then time a queued request out
 * (bench/results/red-team.md "relay-progress"). These notices are that evidence, mid-stream.
 *
 * Rate-limited per cell and backend: a backend gets a new notice only `everyMs` after its last one was taken,
 * whatever the traffic; until taken, a waiting notice keeps the newest relay time.
 * A notice is taken once, by the next route call to its cell (carried, no call of its own) or by the flush its
 * first waiting notice scheduled. One entry per backend a cell relayed lately: bounded by BACKENDS; an entry
 * with nothing waiting whose rate limit has lapsed is dropped at the next take. Holds no I/O and no promises
 * (complete-carry.ts's rule): requests of one isolate share it.
 */
import type { RelayNotice } from "./router-rpc";

interface Entry {
  /** Newest relay time (Date.now()) not yet taken; undefined: nothing waiting. */
  at: number | undefined;
  /** When a notice of this backend was last taken (sent or carried), and the rate limit it was taken under. */
  takenAt: number;
  everyMs: number;
}

interface CellNotices {
  readonly entries: Map<string, Entry>;
  /** Entries with a notice waiting. */
  waiting: number;
  /** The waiting notices' batch (RelayNotices.relayed): the flush it scheduled sends only that one. */
  batch: number;
}

export class RelayNotices {
  private readonly byCell = new Map<string, CellNotices>();
  private batches = 0;

  /**
   * Answer bytes of `backendId` (in `cell`, a RouterDO name) were relayed at `at`. A batch number when this is
   * the cell's first waiting notice: the caller schedules the flush (takeBatch) that sends the batch if no route call takes it first.
   */
  relayed(cell: string, backendId: string, at: number, everyMs: number): number | undefined {
    let c = this.byCell.get(cell);
    const e = c?.entries.get(backendId);
    if (e !== undefined && e.at !== undefined) {
      e.at = Math.max(e.at, at);
      return undefined;
    }
    if (e !== undefined && at - e.takenAt < e.everyMs) return undefined;
    if (c === undefined) {
      c = { entries: new Map(), waiting: 0, batch: 0 };
      this.byCell.set(cell, c);
    }
    c.entries.set(backendId, { at, takenAt: e?.takenAt ?? Number.NEGATIVE_INFINITY, everyMs });
    if (++c.waiting > 1) return undefined;
    c.batch = ++this.batches;
    return c.batch;
  }

  /**
   * Takes `cell`'s waiting notices if they are still batch `batch` (none taken since it began): a flush never
   * sends a later batch early, which a route call could still carry (that batch has its own flush).
   */
  takeBatch(cell: string, batch: number, now: number): RelayNotice[] {
    const c = this.byCell.get(cell);
    return c !== undefined && c.batch === batch && c.waiting > 0 ? this.take(cell, now) : [];
  }

  /** Takes `cell`'s waiting notices as ages at `now` (the caller owns their delivery from then on). */
  take(cell: string, now: number): RelayNotice[] {
    const c = this.byCell.get(cell);
    if (c === undefined) return [];
    const out: RelayNotice[] = [];
    for (const [id, e] of c.entries) {
      if (e.at !== undefined) {
        out.push({ id, ageMs: Math.max(0, now - e.at) });
        e.at = undefined;
        e.takenAt = now;
      } else if (now - e.takenAt >= e.everyMs) {
        c.entries.delete(id);
      }
    }
    c.waiting = 0;
    if (c.entries.size === 0) this.byCell.delete(cell);
    return out;
  }

  /** Backends of `cell` with a notice waiting. */
  waiting(cell: string): number {
    return this.byCell.get(cell)?.waiting ?? 0;
  }
}

/** How many relay notices per UPSTREAM_FIRST_BYTE_TIMEOUT_MS a backend gets from one isolate, at most (RouteCall.relayNoticeMs). */
const RELAY_NOTICES_PER_WINDOW = 4;

/**
 * The longest a notice waits for a route call: its flush runs in waitUntil, which the runtime ends 30 s after
 * the response (a long first-event window must not push it past that).
 */
const RELAY_NOTICE_MAX_MS = 15_000;

/**
 * RouteCall.relayNoticeMs for a first-event window of `firstByteMs`. A notice waits at most this long for a
 * route call and is sent at most this long after the last one, so the RouterDO's evidence of a backend
 * streaming without a break is never older than about half a window, and a request waiting there sees it
 * within its own window (upstream.ts firstBytes asks ROUTER_TIMEOUT_MS before the window ends).
 */
export function relayNoticeMs(firstByteMs: number): number {
  return Math.min(Math.floor(firstByteMs / RELAY_NOTICES_PER_WINDOW), RELAY_NOTICE_MAX_MS);
}
