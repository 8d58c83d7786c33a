/**
 * What an engine reading says about the memory our own requests hold: a
 * queue blocked on KV, which the ledger (cost-model.ts) can miss.
 *
 * vLLM V1's scheduler (vllm-project/vllm, vllm/v1/core/sched/scheduler.py,
 * Scheduler.schedule) admits its waiting queue first come first served; when
 * KVCacheManager.allocate_slots cannot find blocks for the request at the
 * head it returns None and the loop breaks: nobody behind the head is
 * admitted until running requests finish and free blocks. So a request sent
 * to an engine whose head waits for memory waits for the head first, however
 * short it is. The ledger counts what we sent (uncached prompt + output as
 * the client asked), not what running requests pin (cached history, answers
 * without max_tokens), so it can believe the head fits and predict a short
 * wait (bench/results/policy-work.md: "Tail gaps", "KV pinned"). The
 * engine's reading is the ground truth a gateway can have: `waiting`
 * (vllm:num_requests_waiting) and `kvUsage` (vllm:kv_cache_usage_perc, the
 * share of blocks not free — pinned by running requests; cached blocks
 * nobody holds are free in vLLM's BlockPool), as old as the last scrape.
 *
 * Model, for backend i and its latest reading r, taken at t_r:
 * - Which of our requests the engine held waiting at t_r: the last
 *   w = min(r.waiting, |S|) of S, our requests routed before t_r (one routed
 *   at t_r came after the reading) that were still in flight then (open now,
 *   or completed since), by route time:
 *   the scheduler admits in arrival order, so the ones still waiting are the
 *   latest to arrive.
 * - Free KV now: (1 − r.kvUsage) · capacity_i at t_r, plus the KV (the
 *   ledger's: uncached prompt + output) of our requests running at t_r that
 *   completed since. A waiting one that completed since was admitted, and so
 *   was everyone ahead of it: those still in flight take their KV.
 * - Walking the rest of the waiting in arrival order, each one that fits is
 *   admitted and takes its KV; the first that does not is the head, blocked
 *   on memory by overflow = kv_h − free. None: not blocked (a reading with
 *   requests waiting for the step budget or the running-set limit, which the
 *   ledger's queue covers).
 * - The head is admitted when our requests running (at t_r, or admitted
 *   since) that are expected to finish first have freed the overflow (each
 *   expected as the cost model expects it: cost-model.ts expectedEndMs);
 *   that wait is the least any request sent to i now waits before its
 *   prefill starts (it never lowers what the ledger predicts: the cost takes
 *   the later of the two).
 *
 * A stale reading (older than maxAgeMs), one without ownInflight, one with
 * nothing waiting, or none at all changes nothing: the ledger alone decides
 * (foreign-load.ts's rules). Pure: time is a parameter.
 */
import { endWhenFreed, type PrefillCostModel, type PrefillSlot } from "./cost-model";
import type { EngineSignals } from "./types";

interface Released {
  readonly slot: PrefillSlot;
  /** When it completed. */
  readonly at: number;
}

export class EngineMemory {
  /** Per backend, our requests that completed within the last maxAgeMs, oldest first. */
  private released: Released[][] = [];
  private readonly set: PrefillSlot[] = [];
  private readonly ends: { end: number; kv: number }[] = [];
  private readonly holders: PrefillSlot[] = [];
  /** This decision's S members that completed since the reading. */
  private readonly since = new Set<PrefillSlot>();

  /** @param maxAgeMs readings older than this change nothing; completions older than it are forgotten. */
  constructor(readonly maxAgeMs: number) {
    if (!(maxAgeMs > 0)) throw new RangeError(`maxAgeMs must be > 0, got ${maxAgeMs}`);
  }

  /** The fleet changed (by index): forgets every completion. */
  reset(size: number): void {
    this.released = Array.from({ length: size }, () => []);
  }

  /** A request of ours on backend i completed at `now` (any outcome): its KV is free since. */
  completed(i: number, slot: PrefillSlot, now: number): void {
    const list = this.released[i];
    if (list === undefined) return;
    list.push({ slot, at: now });
    let drop = 0;
    while (drop < list.length && now - list[drop]!.at > this.maxAgeMs) drop++;
    if (drop > 0) list.splice(0, drop);
  }

  /**
   * The least wait, ms, before a request sent to backend i now starts its prefill, by i's reading `r`:
   * until the memory-blocked head of its queue is admitted (the header); 0 when not blocked or unusable.
   */
  headWaitMs(
    r: EngineSignals | undefined,
    i: number,
    capacityTokens: number,
    model: PrefillCostModel,
    now: number,
  ): number {
    if (r === undefined || r.ownInflight === undefined || !(now - r.sampledAt <= this.maxAgeMs)) return 0;
    if (!(r.waiting > 0) || !(capacityTokens > 0)) return 0;
    // Nothing learned about decode here yet: no holder has an expected end, so no wait is known.
    if (!model.hasExpectedEnds(i)) return 0;
    const t = r.sampledAt;
    const released = this.released[i] ?? [];
    const openSlots = model.openSlots(i);
    // S: ours in flight at t, by route time (open now, or completed after t). One routed at t itself came
    // after the reading: the engine rendered its metrics before the reading was stamped (the RouterDO stamps
    // it when the headers land; the simulator's scrape reads before that instant's arrivals), and Mooncake's
    // arrivals, on a whole-second grid, land on the scrape's instants in bursts
    // (bench/results/scrape-margin/README.md). Counted, they would be taken for the engine's waiting.
    // `since` holds the members that completed after t (a completed slot has left openSlots: the rest of S
    // is open now).
    const set = this.set;
    const since = this.since;
    set.length = 0;
    since.clear();
    for (const slot of openSlots) if (slot.at < t) set.push(slot);
    for (const d of released)
      if (d.at > t && d.slot.at < t) {
        set.push(d.slot);
        since.add(d.slot);
      }
    const w = Math.min(Math.max(0, r.waiting), set.length);
    if (w === 0) return 0;
    set.sort((a, b) => a.at - b.at);
    const running = set.length - w;
    // What was free at t, plus what ours running then freed since; the rest of them still hold theirs.
    let free = Math.max(0, 1 - r.kvUsage) * capacityTokens;
    const holders = this.holders;
    holders.length = 0;
    for (let k = 0; k < running; k++) {
      const s = set[k]!;
      if (since.has(s)) free += s.kvTokens;
      else holders.push(s);
    }
    // The queue in arrival order, ours waiting at t. One that completed since was admitted, and so was
    // everyone ahead of it (first come first served): those still in flight hold their KV now. From there
    // on each one that fits is admitted and takes its KV; the first that does not is the head.
    let from = running;
    for (let k = set.length - 1; k >= running; k--)
      if (since.has(set[k]!)) {
        from = k + 1;
        break;
      }
    for (let k = running; k < from; k++)
      if (!since.has(set[k]!)) {
        holders.push(set[k]!);
        free -= set[k]!.kvTokens;
      }
    let overflow = 0;
    let blocked = false;
    for (let k = from; k < set.length; k++) {
      const q = set[k]!;
      if (q.kvTokens > free) {
        overflow = q.kvTokens - free;
        blocked = true;
        break;
      }
      free -= q.kvTokens;
      holders.push(q);
    }
    if (!blocked) return 0;
    // Our requests running (at t, or admitted since), by expected end: the head is in once they free it.
    const ends = this.ends;
    ends.length = 0;
    for (const slot of holders) {
      ends.push({ end: model.expectedEndMs(i, slot, now), kv: slot.kvTokens });
    }
    if (ends.length === 0) return 0;
    ends.sort((a, b) => a.end - b.end);
    // When none covers it, the ledger undercounts what they pin (the reason for this module): all of them
    // out, then it fits.
    return endWhenFreed(
      ends.length,
      overflow,
      (j) => ends[j]!.kv,
      (j) => ends[j]!.end,
    );
  }
}
