/**
 * What one backend (we believe) holds in its prefix cache, and how that belief
 * is corrected by what the backend reports.
 *
 * `record` runs after a request is routed here (the chosen backend only): it
 * touches the request's blocks and returns a receipt with what `settle`
 * needs later — the stamps the matched blocks had before this request, and
 * which stamps belonged to requests still in flight at the time.
 *
 * `settle` runs when the request ends:
 * - ok and the backend hit LESS than we expected (by more than tokenizer skew,
 *   SKEW_TOLERANCE): the first missed block was
 *   evicted on the real engine before this request arrived, and engines evict
 *   in LRU order, so everything we hold that is at least as old as that
 *   block's previous stamp is gone too. Evict it. Two guards keep this from
 *   firing on misses that are not evictions: (1) an engine never reuses the
 *   block holding the last prompt token (vLLM recomputes it to get logits),
 *   so at most floor((promptTokens − 1) / blockTokens) blocks can hit;
 *   (2) if the missed block's previous stamp came from a request that was
 *   still in flight when this one was routed, the miss is explained by that
 *   request's prefill not having finished; its own outcome will tell.
 * - not ok (error/abort before output): forget the blocks this request
 *   inserted beyond what was already cached, unless a later request touched
 *   them since (then they are that request's now).
 */
import { LruBlockSet } from "./lru-block-set";
import type { BlockKey, RouteOutcome } from "./types";

/** What `settle` needs, captured at route time. Opaque to callers. */
export interface AffinityReceipt {
  readonly blocks: readonly BlockKey[];
  /** Blocks touched (all of the request's keys). */
  readonly touched: number;
  /** Blocks we expected to hit (longest cached prefix at route time). */
  readonly matched: number;
  /** Stamp given to blocks[touched - 1]; blocks[j] got firstStamp + touched - 1 - j. */
  readonly firstStamp: number;
  /** previousStamps[j] = stamp of blocks[j] before this request (-1: absent), j < matched. */
  readonly previousStamps: Float64Array;
  /** Stamps ≥ this belonged to requests still in flight here when this one was routed. */
  readonly pendingFrom: number;
  settled: boolean;
}

export interface SettleResult {
  /** Entries evicted because the backend proved to have lost them. */
  readonly evicted: number;
  /** Entries forgotten because the request failed before they were computed. */
  readonly forgotten: number;
}

const EMPTY = new Float64Array(0);

/**
 * Share of a prompt's reusable blocks (at least one block) by which a reported hit may fall short of
 * the expected one before we call it an eviction: tokenizer and chat-template skew between the
 * gateway and the engine, not lost cache. A real eviction loses the whole tail past the evicted block.
 */
export const SKEW_TOLERANCE = 0.05;

export class BackendAffinity {
  readonly blocks: LruBlockSet;
  /** Receipts of requests in flight here, in stamp order (lazy deletion). */
  private pending: AffinityReceipt[] = [];
  private pendingHead = 0;

  constructor(capacityBlocks: number) {
    this.blocks = new LruBlockSet(capacityBlocks);
  }

  /** Longest prefix of `blocks` we believe is cached here, in blocks. */
  matched(blocks: readonly BlockKey[]): number {
    return this.blocks.longestPrefix(blocks);
  }

  /** Touches the request's blocks (tail first); `matched` is the prefix length found at route time. */
  record(blocks: readonly BlockKey[], matched: number): AffinityReceipt {
    const pendingFrom = this.oldestPendingStamp();
    const previousStamps = matched > 0 ? new Float64Array(matched) : EMPTY;
    const firstStamp = this.blocks.touchChain(blocks, blocks.length, previousStamps);
    const receipt: AffinityReceipt = {
      blocks,
      touched: blocks.length,
      matched,
      firstStamp,
      previousStamps,
      pendingFrom,
      settled: false,
    };
    this.pending.push(receipt);
    return receipt;
  }

  /** Applies what the backend reported. Idempotent per receipt. */
  settle(
    receipt: AffinityReceipt,
    outcome: RouteOutcome,
    blockTokens: number,
    promptTokens: number,
  ): SettleResult {
    if (receipt.settled) return { evicted: 0, forgotten: 0 };
    receipt.settled = true;
    this.dropSettledPending();
    if (!outcome.ok) {
      let forgotten = 0;
      const last = receipt.firstStamp + receipt.touched - 1;
      for (let j = receipt.matched; j < receipt.touched; j++) {
        if (this.blocks.removeIfStamp(receipt.blocks[j]!, last - j)) forgotten++;
      }
      return { evicted: 0, forgotten };
    }
    if (outcome.cachedTokens === undefined) return { evicted: 0, forgotten: 0 };
    // The engine counts in its own tokens (its tokenizer, its chat template), we in ours: scale its hit
    // by the two prompt counts, and call a shortfall an eviction only past a tolerance. Without this a
    // systematic skew of a few tokens reads as an eviction on every request and empties the index.
    const enginePrompt = outcome.promptTokens;
    const scale = enginePrompt !== undefined && enginePrompt > 0 ? promptTokens / enginePrompt : 1;
    const hit = Math.floor((outcome.cachedTokens * scale) / blockTokens);
    const reusable = Math.max(0, Math.floor((promptTokens - 1) / blockTokens));
    const expected = Math.min(receipt.matched, reusable);
    const tolerance = Math.max(1, Math.ceil(SKEW_TOLERANCE * reusable));
    // A shortfall up to the tolerance is skew, not loss. (With `hit + tolerance > expected` an exact hit
    // scaled by 0.996 — a few template tokens — floored one entry short and read as an eviction: the
    // e2e Mooncake replay showed it emptying whole indexes through the prefix every request shares.)
    if (expected - hit <= tolerance) return { evicted: 0, forgotten: 0 };
    const before = receipt.previousStamps[hit]!;
    if (before < 0 || before >= receipt.pendingFrom) return { evicted: 0, forgotten: 0 };
    return { evicted: this.blocks.evictThrough(before), forgotten: 0 };
  }

  /**
   * Forgets everything this backend is believed to hold (an operator's reset).
   * Requests in flight settle into nothing: their receipts point at entries
   * that are gone, and the clock keeps counting so no old stamp matches again.
   */
  reset(): void {
    this.blocks.evictThrough(this.blocks.nextStamp);
    for (let i = this.pendingHead; i < this.pending.length; i++) this.pending[i]!.settled = true;
    this.pending = [];
    this.pendingHead = 0;
  }

  /** Smallest stamp handed to a request still in flight, or the next stamp when none is. */
  private oldestPendingStamp(): number {
    this.dropSettledPending();
    const r = this.pending[this.pendingHead];
    return r === undefined ? this.blocks.nextStamp : r.firstStamp;
  }

  private dropSettledPending(): void {
    while (this.pendingHead < this.pending.length && this.pending[this.pendingHead]!.settled)
      this.pendingHead++;
    // Compact now and then so the queue does not grow without bound.
    if (this.pendingHead > 64 && this.pendingHead * 2 > this.pending.length) {
      this.pending = this.pending.slice(this.pendingHead);
      this.pendingHead = 0;
    }
  }
}
