/**
 * Keeps a key's slots alive while this isolate still relays their responses.
 *
 * Why: a slot is released when its response body ends, which a process that
 * dies mid-stream (a deploy, a crash, wrangler dev restarted) never does. So
 * a slot is granted for a short TTL (KEY_SLOT_TTL_MS) and renewed while its
 * holder lives; a dead holder stops renewing and its slot ends one TTL later,
 * instead of locking a capped key out for LEASE_TTL_SECONDS (measured: 600 s,
 * bench/results/ops-pass.md). Etcd's and Chubby's leases work the same way:
 * the holder's keep-alive, not its goodbye, is what keeps the lease.
 *
 * Cost: one renewal call per key per period per isolate, whatever the number
 * of that key's streams in it. Each stream has its own timer (a timer, and
 * the DO stub it calls through, belong to the request that made them: a
 * Worker may not do I/O for one request from another's), but when it fires
 * it renews every slot of its key held in this isolate and the key's other
 * streams skip their turn if a renewal went out less than a period ago. A
 * slot is thus named in a renewal at least every 2 periods; with the TTL 3
 * periods, one lost or late renewal still leaves it a period to spare.
 *
 * A request that ends before its first period sends no renewal at all (the
 * short-request path is acquire + release, as before).
 *
 * A failed renewal is swallowed: the slots keep their current deadline and
 * the next period tries again. If renewals keep failing, the slots lapse
 * and their streams go on uncounted (the limiter fails open, like every other
 * limiter failure); a later renewal grants such a slot again if the key has
 * room, never past its limit (durable-objects/key-limiter-do.ts), so the
 * limit stays exact for the streams that hold slots.
 *
 * Timers in Workers: a timer runs only while its request is alive; a
 * streamed response keeps it alive until the body ends, which is when the
 * holder stops (body-end.ts: done, error or client cancel), clearing it.
 * A request can also die without its stop being called (a client gone and no
 * cancel delivered, a request cancelled at a runtime limit): its timer dies
 * with it, so a renewal names only the slots whose own timer ticked within
 * the last 2 periods — the holder's keep-alive, never another stream's, is
 * what keeps a slot, and a dead request's slot lapses a TTL later.
 */

type Send = (slotIds: readonly string[]) => Promise<unknown>;

/** The timer functions a renewer uses (the runtime's; a test's, to kill one request's timer as a dead request's dies). */
export interface IntervalTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const RUNTIME_TIMERS: IntervalTimers = {
  set: (fn, ms) => setInterval(fn, ms),
  clear: (h) => clearInterval(h as ReturnType<typeof setInterval>),
};

interface KeyHolds {
  /** slotId → when its own holder's timer last ticked (ms; the grant before the first tick). */
  readonly slots: Map<string, number>;
  /** When this isolate last sent a renewal for the key (ms; -Infinity: never). */
  lastSentAt: number;
}

export class SlotRenewer {
  private readonly keys = new Map<string, KeyHolds>();

  constructor(
    private readonly periodMs: number,
    private readonly timers: IntervalTimers = RUNTIME_TIMERS,
  ) {
    if (!Number.isInteger(periodMs) || periodMs < 1)
      throw new Error(`slot renewal period must be a positive integer of ms, got ${periodMs}`);
  }

  /**
   * Renews `slotId` of `keyId` through `send` (the holding request's own
   * stub) until the returned stop is called. Stop is idempotent and clears
   * the timer.
   */
  hold(keyId: string, slotId: string, send: Send): () => void {
    let holds = this.keys.get(keyId);
    if (holds === undefined) {
      holds = { slots: new Map(), lastSentAt: -Infinity };
      this.keys.set(keyId, holds);
    }
    const mine = holds;
    mine.slots.set(slotId, Date.now());
    const timer = this.timers.set(() => {
      const now = Date.now();
      mine.slots.set(slotId, now);
      if (now - mine.lastSentAt < this.periodMs) return;
      mine.lastSentAt = now;
      const live: string[] = [];
      for (const [id, tickedAt] of mine.slots) {
        if (now - tickedAt < 2 * this.periodMs) live.push(id);
        // Its holder died without stopping (no tick for 2 periods): forget it, let it lapse.
        else mine.slots.delete(id);
      }
      send(live).catch(() => {
        // Unreachable or slow limiter: the slots keep their deadline; the next period tries again.
      });
    }, this.periodMs);
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      this.timers.clear(timer);
      mine.slots.delete(slotId);
      if (mine.slots.size === 0) this.keys.delete(keyId);
    };
  }
}
