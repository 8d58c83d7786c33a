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
 */

type Send = (slotIds: readonly string[]) => Promise<unknown>;

interface KeyHolds {
  readonly slots: Set<string>;
  /** When this isolate last sent a renewal for the key (ms; -Infinity: never). */
  lastSentAt: number;
}

export class SlotRenewer {
  private readonly keys = new Map<string, KeyHolds>();

  constructor(private readonly periodMs: number) {
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
      holds = { slots: new Set(), lastSentAt: -Infinity };
      this.keys.set(keyId, holds);
    }
    const mine = holds;
    mine.slots.add(slotId);
    const timer = setInterval(() => {
      const now = Date.now();
      if (now - mine.lastSentAt < this.periodMs) return;
      mine.lastSentAt = now;
      send([...mine.slots]).catch(() => {
        // Unreachable or slow limiter: the slots keep their deadline; the next period tries again.
      });
    }, this.periodMs);
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      mine.slots.delete(slotId);
      if (mine.slots.size === 0 && this.keys.get(keyId) === mine) this.keys.delete(keyId);
    };
  }
}
