/**
 * KeyLimiterDO: one per gateway key, counting that key's requests in flight.
 * A slot is granted while the key holds fewer than the limit the Worker
 * sends; it ends when the Worker releases it (the response body finished,
 * errored or was cancelled) or, if that release is lost, at its deadline.
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
} from "../src/worker/key-limits/key-limiter-rpc";

/** Bounds on what a Worker may send (config allows less; these only keep a bug from doing harm). */
const MAX_LIMIT = 100_000;
const MAX_TTL_MS = 86_400_000;
const MAX_SLOT_ID_CHARS = 128;

function invalid(input: AcquireInput): string | undefined {
  if (typeof input.slotId !== "string" || input.slotId === "" || input.slotId.length > MAX_SLOT_ID_CHARS)
    return "slotId must be a non-empty string";
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > MAX_LIMIT)
    return `limit must be an integer in 1..${MAX_LIMIT}`;
  if (!Number.isInteger(input.ttlMs) || input.ttlMs < 1 || input.ttlMs > MAX_TTL_MS)
    return `ttlMs must be an integer in 1..${MAX_TTL_MS}`;
  return undefined;
}

export class KeyLimiterDO extends DurableObject<Env> {
  /** slotId → deadline (epoch ms). */
  private readonly slots = new Map<string, number>();
  private readonly counts = { acquired: 0, refused: 0, released: 0, expired: 0 };
  /** The alarm we believe is scheduled (undefined: none), so the hot path rarely touches storage. */
  private alarmAt: number | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec(
        "CREATE TABLE IF NOT EXISTS slots (id TEXT PRIMARY KEY, deadline INTEGER NOT NULL) WITHOUT ROWID",
      );
      for (const row of ctx.storage.sql.exec<{ id: string; deadline: number }>(
        "SELECT id, deadline FROM slots",
      ))
        this.slots.set(row.id, row.deadline);
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
    this.slots.set(input.slotId, deadline);
    this.ctx.storage.sql.exec("INSERT INTO slots (id, deadline) VALUES (?, ?)", input.slotId, deadline);
    this.counts.acquired++;
    await this.scheduleAlarm(deadline);
    return { ok: true, inflight: this.slots.size };
  }

  /** Ends a slot. */
  async release(slotId: string): Promise<ReleaseResult> {
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
