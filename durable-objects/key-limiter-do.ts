/**
 * KeyLimiterDO: one per gateway key, counting that key's requests in flight.
 * A slot is granted while the key holds fewer than the limit the Worker
 * sends; it ends when the Worker releases it (the response body finished,
 * errored or was cancelled) or, if that release is lost, at its deadline.
 * The deadline is short (KEY_SLOT_TTL_MS) and the Worker relaying the
 * response renews it while the body flows (src/worker/key-limits/
 * slot-renewal.ts), so a holder that died frees its slots within a TTL and
 * a long stream keeps its own. A renewal of a slot that already expired
 * grants it again only if the key has room: never more than the limit.
 *
 * Slots are kept in memory for the hot path and in SQLite so that they
 * survive the object's eviction: a key whose streams outlive an idle object
 * would otherwise come back with a count of zero. Expired slots are dropped
 * before every count (a late alarm never blocks a key) and by one alarm set
 * to the earliest deadline (so an abandoned key's rows do not linger).
 */
import { DurableObject } from "cloudflare:workers";
import type {
  AcquireInput,
  AcquireResult,
  KeyLimiterStats,
  ReleaseResult,
  RenewInput,
  RenewResult,
} from "../src/worker/key-limits/key-limiter-rpc";

/** Bounds on what a Worker may send (config allows less; these only keep a bug from doing harm). */
const MAX_LIMIT = 100_000;
const MAX_TTL_MS = 86_400_000;
const MAX_SLOT_ID_CHARS = 128;

const validSlotId = (id: unknown): boolean =>
  typeof id === "string" && id !== "" && id.length <= MAX_SLOT_ID_CHARS;

function invalidBounds(input: { readonly limit: number; readonly ttlMs: number }): string | undefined {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > MAX_LIMIT)
    return `limit must be an integer in 1..${MAX_LIMIT}`;
  if (!Number.isInteger(input.ttlMs) || input.ttlMs < 1 || input.ttlMs > MAX_TTL_MS)
    return `ttlMs must be an integer in 1..${MAX_TTL_MS}`;
  return undefined;
}

function invalid(input: AcquireInput): string | undefined {
  if (!validSlotId(input.slotId)) return "slotId must be a non-empty string";
  return invalidBounds(input);
}

function invalidRenewal(input: RenewInput): string | undefined {
  // One isolate renews what it holds for the key: never more than the limit's bound.
  if (!Array.isArray(input.slotIds) || input.slotIds.length > MAX_LIMIT || !input.slotIds.every(validSlotId))
    return `slotIds must be an array of at most ${MAX_LIMIT} non-empty strings`;
  return invalidBounds(input);
}

export class KeyLimiterDO extends DurableObject<Env> {
  /** slotId → deadline (epoch ms). */
  private readonly slots = new Map<string, number>();
  private readonly counts = { acquired: 0, refused: 0, released: 0, expired: 0, renewed: 0 };
  /**
   * slotId → until when (epoch ms) a released slot is remembered: a renewal sent by another request of the
   * key before this release (its own stub, so no order between the two calls) must not grant it again —
   * nobody would hold or release it. Remembered for a TTL (the longest asked), the most a renewal in
   * flight can lag; pruned with the expired slots, so bounded by the key's releases per TTL.
   */
  private readonly released = new Map<string, number>();
  /** The longest TTL an acquire or renewal asked for: how long a released id is remembered. */
  private longestTtlMs = 0;
  /** The alarm we believe is scheduled (undefined: none), so the hot path rarely touches storage. */
  private alarmAt: number | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec(
        "CREATE TABLE IF NOT EXISTS slots (id TEXT PRIMARY KEY, deadline INTEGER NOT NULL) WITHOUT ROWID",
      );
      const now = Date.now();
      for (const row of ctx.storage.sql.exec<{ id: string; deadline: number }>(
        "SELECT id, deadline FROM slots",
      )) {
        this.slots.set(row.id, row.deadline);
        // After an eviction, a release must still be remembered for as long as a held slot can live.
        this.longestTtlMs = Math.max(this.longestTtlMs, row.deadline - now);
      }
      this.alarmAt = (await ctx.storage.getAlarm()) ?? undefined;
    });
  }

  /** Grants a slot unless the key already holds `limit`; granting the same slotId twice is one slot. */
  async acquire(input: AcquireInput): Promise<AcquireResult> {
    const now = Date.now();
    this.expire(now);
    const bad = invalid(input);
    if (bad !== undefined)
      return { ok: false, code: "invalid_input", inflight: this.slots.size, message: bad };
    if (this.slots.has(input.slotId)) return { ok: true, inflight: this.slots.size };
    if (this.slots.size >= input.limit) {
      this.counts.refused++;
      return {
        ok: false,
        code: "limit_reached",
        inflight: this.slots.size,
        message: `${this.slots.size} of ${input.limit} slots in use`,
      };
    }
    const deadline = now + input.ttlMs;
    this.longestTtlMs = Math.max(this.longestTtlMs, input.ttlMs);
    this.slots.set(input.slotId, deadline);
    this.ctx.storage.sql.exec("INSERT INTO slots (id, deadline) VALUES (?, ?)", input.slotId, deadline);
    this.counts.acquired++;
    await this.scheduleAlarm(deadline);
    return { ok: true, inflight: this.slots.size };
  }

  /**
   * Moves the deadline of each slot still held to now + ttlMs. A slot that
   * already expired (its renewals were lost, not its holder) is granted again
   * while the key holds fewer than `limit`, else reported lost: a renewal never
   * lets the key hold more than its limit.
   */
  async renew(input: RenewInput): Promise<RenewResult> {
    const now = Date.now();
    this.expire(now);
    const bad = invalidRenewal(input);
    if (bad !== undefined)
      return { ok: false, code: "invalid_input", inflight: this.slots.size, message: bad };
    const deadline = now + input.ttlMs;
    this.longestTtlMs = Math.max(this.longestTtlMs, input.ttlMs);
    let renewed = 0;
    let regranted = 0;
    let lost = 0;
    for (const id of new Set(input.slotIds)) {
      if (this.slots.has(id)) {
        this.slots.set(id, deadline);
        this.ctx.storage.sql.exec("UPDATE slots SET deadline = ? WHERE id = ?", deadline, id);
        renewed++;
      } else if (this.released.has(id)) {
        // Released while this renewal was on its way: its holder is done, not lost.
        lost++;
      } else if (this.slots.size < input.limit) {
        this.slots.set(id, deadline);
        this.ctx.storage.sql.exec("INSERT INTO slots (id, deadline) VALUES (?, ?)", id, deadline);
        regranted++;
      } else {
        lost++;
      }
    }
    this.counts.renewed += renewed;
    this.counts.acquired += regranted;
    // The alarm stays at the earliest deadline it knew: when it fires early it re-arms for the next one.
    if (renewed + regranted > 0) await this.scheduleAlarm(deadline);
    return { ok: true, renewed, regranted, lost, inflight: this.slots.size };
  }

  /** Ends a slot. */
  async release(slotId: string): Promise<ReleaseResult> {
    this.released.set(slotId, Date.now() + this.longestTtlMs);
    if (!this.slots.delete(slotId)) {
      return {
        ok: false,
        code: "unknown_slot",
        inflight: this.slots.size,
        message: "slot is unknown, already released or expired",
      };
    }
    this.ctx.storage.sql.exec("DELETE FROM slots WHERE id = ?", slotId);
    this.counts.released++;
    return { ok: true, inflight: this.slots.size };
  }

  async stats(): Promise<KeyLimiterStats> {
    this.expire(Date.now());
    return { ok: true, inflight: this.slots.size, ...this.counts };
  }

  /** Drops overdue slots and re-arms for the next deadline. */
  override async alarm(): Promise<void> {
    this.alarmAt = undefined;
    this.expire(Date.now());
    let next: number | undefined;
    for (const d of this.slots.values()) if (next === undefined || d < next) next = d;
    await this.scheduleAlarm(next);
  }

  private expire(now: number): void {
    for (const [id, until] of this.released) if (until <= now) this.released.delete(id);
    for (const [id, deadline] of this.slots) {
      if (deadline > now) continue;
      this.slots.delete(id);
      this.ctx.storage.sql.exec("DELETE FROM slots WHERE id = ?", id);
      this.counts.expired++;
    }
  }

  /** Sets the alarm to `at` unless one is already due earlier (one alarm, earliest deadline). */
  private async scheduleAlarm(at: number | undefined): Promise<void> {
    if (at === undefined) return;
    if (this.alarmAt !== undefined && this.alarmAt <= at) return;
    this.alarmAt = at;
    await this.ctx.storage.setAlarm(at);
  }
}
