/**
 * What one backend (we believe) holds in its prefix cache, and how that belief
 * is corrected by what the backend reports.
 *
 * The index follows the engine's cache as vLLM V1 keeps it
 * (vllm/v1/core/block_pool.py, kv_cache_manager.py): a running request's
 * blocks are pinned, and when it finishes they go back to the free queue tail
 * first, to be reused least recently freed first. So a request's keyed
 * blocks are pinned while it is in flight (never evicted to make room) and
 * touched again when it ends: their place in the LRU order is when the
 * engine freed them, not when we routed; and the full blocks of its prompt
 * past our key window (kv-footprint.ts) are set aside while it runs
 * (reserved capacity) and held as anonymous entries once it ends, as are the blocks of its answer
 * and its partial last block when the caller reports the output's length (kv-footprint.ts tailEntries).
 * Measured against the engine model: bench/results/policy-work.md, "Index capacity" and "Output blocks".
 *
 * `record` runs after a request is routed here (the chosen backend only): it
 * touches the request's blocks and returns a receipt with what `settle`
 * needs later — the stamps the matched blocks had before this request, and
 * which of them were given by requests still in flight at the time.
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
 *   (2) if the missed block's previous stamp came from the route of a request
 *   that was still in flight when this one was routed, the miss is explained
 *   by that request's prefill not having finished; its own outcome will tell.
 *   (A stamp given when a request ended is a computed block: no excuse.)
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
  /** pendingAt[j] = 1 when previousStamps[j] was given by the route of a request still in flight. */
  readonly pendingAt: Uint8Array;
  /**
   * nodes[j] = the index node blocks[j] had when pinned: where settle looks first (a hint, checked, so a
   * node evicted or reused since costs one ordinary lookup). 4 bytes per key while the request runs.
   */
  readonly nodes: Int32Array;
  /** Entries of capacity set aside while it runs: its prompt past the keys, surely not cached. */
  readonly reserved: number;
  /** Its prompt's entries past the keys that may be cached (the whole window matched): settle decides. */
  readonly deferred: number;
  /**
   * Its prompt's entries past the keys that only an estimate claims (a count the prompt bound cut to the
   * largest KV, or the part of a count the Worker could not vouch for: router.ts record), after the
   * reserved or deferred ones: neither set aside nor evicted for; settle charges what the engine's own
   * prompt count confirms past those, at most these.
   */
  readonly unconfirmed: number;
  settled: boolean;
}

export interface SettleResult {
  /** Keyed entries evicted because the backend proved to have lost them (anonymous ones go too, uncounted). */
  readonly evicted: number;
  /** Entries forgotten because the request failed before they were computed. */
  readonly forgotten: number;
}

const EMPTY = new Float64Array(0);
const EMPTY_MASK = new Uint8Array(0);

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
  /**
   * The fraction of an entry of answer blocks charged to no entry yet: an entry is blockTokens ×
   * indexStride tokens, a request's answer is not a whole number of them, and rounding each one would
   * bias the index's capacity by up to half an entry per request.
   */
  private tailCarry = 0;

  constructor(capacityBlocks: number) {
    this.blocks = new LruBlockSet(capacityBlocks);
  }

  /**
   * Entries the requests in flight here pin, each once however many requests hold it: their keyed blocks,
   * cached history and new alike (vLLM V1 keeps a block out of its free queue while any running request
   * holds it: block_pool.py touch / free_blocks).
   */
  pinnedEntries(): number {
    return this.blocks.pinnedEntries;
  }

  /** Longest prefix of `blocks` we believe is cached here, in blocks. */
  matched(blocks: readonly BlockKey[]): number {
    return this.blocks.longestPrefix(blocks);
  }

  /**
   * Touches the request's blocks (tail first); `matched` is the prefix length found at route time and
   * `unkeyed` the entries its prompt fills past them (kv-footprint.ts pastWindowEntries); `unconfirmed`
   * entries past them that only an estimate claims, left to settle (AffinityReceipt.unconfirmed).
   */
  record(blocks: readonly BlockKey[], matched: number, unkeyed = 0, unconfirmed = 0): AffinityReceipt {
    this.dropSettledPending();
    // A prefix cache hit is a run of leading blocks: nothing past the keys can hit unless all of them
    // do. When we believe they all do, the rest may be cached too, and cached_tokens will say.
    const deferred = blocks.length > 0 && matched >= blocks.length ? unkeyed : 0;
    const reserved = unkeyed - deferred;
    if (reserved > 0) this.blocks.reserve(reserved);
    const previousStamps = matched > 0 ? new Float64Array(matched) : EMPTY;
    // The pins come after the whole touch (as pin() after touchChain), in one call that reuses its nodes.
    const firstStamp = this.blocks.touchAndPinChain(blocks, blocks.length, previousStamps);
    const pendingAt = matched > 0 ? this.pendingMask(previousStamps) : EMPTY_MASK;
    const nodes = this.blocks.chainNodesOf(blocks.length);
    const receipt: AffinityReceipt = {
      blocks,
      touched: blocks.length,
      matched,
      firstStamp,
      previousStamps,
      pendingAt,
      nodes,
      reserved,
      deferred,
      unconfirmed,
      settled: false,
    };
    this.pending.push(receipt);
    return receipt;
  }

  /**
   * Applies what the backend reported. Idempotent per receipt. `tail`: the entries its answer and
   * partial last block held in the engine (kv-footprint.ts tailEntries, fractional), charged as
   * anonymous entries when it ended ok. `confirmed`: the entries past its keys the engine's own prompt
   * count (usage.prompt_tokens) fills, charged up to the receipt's `unconfirmed`.
   */
  settle(
    receipt: AffinityReceipt,
    outcome: RouteOutcome,
    blockTokens: number,
    promptTokens: number,
    tail = 0,
    confirmed = 0,
  ): SettleResult {
    if (receipt.settled) return { evicted: 0, forgotten: 0 };
    receipt.settled = true;
    this.dropSettledPending();
    if (receipt.reserved > 0) this.blocks.reserve(-receipt.reserved);
    this.blocks.unpinChain(receipt.blocks, receipt.touched, receipt.nodes);
    if (!outcome.ok) {
      let forgotten = 0;
      const last = receipt.firstStamp + receipt.touched - 1;
      for (let j = receipt.matched; j < receipt.touched; j++) {
        if (this.blocks.removeIfStamp(receipt.blocks[j]!, last - j)) forgotten++;
      }
      return { evicted: 0, forgotten };
    }
    const hit = this.engineHit(outcome, blockTokens, promptTokens);
    const evicted = hit === undefined ? 0 : this.correct(receipt, hit, blockTokens, promptTokens);
    this.release(receipt, hit, tail, confirmed);
    return { evicted, forgotten: 0 };
  }

  /**
   * The engine's hit in our entries, or undefined when it reported none. The engine counts in its own
   * tokens (its tokenizer, its chat template), we in ours: its hit is scaled by the two prompt counts.
   */
  private engineHit(outcome: RouteOutcome, blockTokens: number, promptTokens: number): number | undefined {
    if (outcome.cachedTokens === undefined) return undefined;
    const enginePrompt = outcome.promptTokens;
    const scale = enginePrompt !== undefined && enginePrompt > 0 ? promptTokens / enginePrompt : 1;
    return Math.floor((outcome.cachedTokens * scale) / blockTokens);
  }

  /** A short hit: evicts what the engine proved to have lost. Returns how many entries. */
  private correct(receipt: AffinityReceipt, hit: number, blockTokens: number, promptTokens: number): number {
    // The engine counts in its own tokens (its tokenizer, its chat template), we in ours: scale its hit
    // by the two prompt counts, and call a shortfall an eviction only past a tolerance. Without this a
    // systematic skew of a few tokens reads as an eviction on every request and empties the index.
    const reusable = Math.max(0, Math.floor((promptTokens - 1) / blockTokens));
    const expected = Math.min(receipt.matched, reusable);
    const tolerance = Math.max(1, Math.ceil(SKEW_TOLERANCE * reusable));
    // A shortfall up to the tolerance is skew, not loss. (With `hit + tolerance > expected` an exact hit
    // scaled by 0.996 — a few template tokens — floored one entry short and read as an eviction: the
    // e2e Mooncake replay showed it emptying whole indexes through the prefix every request shares.)
    if (expected - hit <= tolerance) return 0;
    const before = receipt.previousStamps[hit]!;
    if (before < 0 || receipt.pendingAt[hit] === 1) return 0;
    const keyed = this.blocks.size - this.blocks.anonymous;
    this.blocks.evictThrough(before);
    return keyed - (this.blocks.size - this.blocks.anonymous);
  }

  /**
   * The request ended and the engine freed its blocks: its answer's blocks and what its prompt filled
   * past our keys (the part set aside, and the deferred part the engine did not find cached) become
   * anonymous entries, then its keyed blocks are touched again, tail first, so they are the most
   * recently freed (vLLM frees a request's blocks in reverse: the answer's go to the LRU before the
   * prompt's). Of what only an estimate claimed, the part the engine's count confirms, less what the
   * engine found cached past our keys, as for the deferred part.
   */
  private release(receipt: AffinityReceipt, hit: number | undefined, tail: number, confirmed: number): void {
    let n = receipt.reserved;
    const pastKeysHit = Math.max(0, (hit ?? 0) - receipt.touched);
    if (receipt.deferred > 0) n += Math.max(0, receipt.deferred - pastKeysHit);
    if (receipt.unconfirmed > 0 && confirmed > 0) {
      // `confirmed` counts from the keys on; the entries charged above (set aside or deferred) come first.
      const charged = receipt.reserved + receipt.deferred;
      const beyond = Math.min(receipt.unconfirmed, Math.floor(confirmed) - charged);
      n += Math.max(0, beyond - Math.max(0, pastKeysHit - charged));
    }
    if (tail > 0 && Number.isFinite(tail)) {
      this.tailCarry += tail;
      const whole = Math.floor(this.tailCarry);
      this.tailCarry -= whole;
      n += whole;
    }
    if (n > 0) this.blocks.occupy(n);
    // Starts from the nodes settle's unpin found (the last chain walk on this set); exact either way.
    if (receipt.touched > 0) this.blocks.retouchChain(receipt.blocks, receipt.touched);
  }

  /**
   * Forgets everything this backend is believed to hold (an operator's reset).
   * Requests in flight settle into nothing: their receipts point at entries
   * that are gone, and the clock keeps counting so no old stamp matches again.
   */
  reset(): void {
    this.blocks.evictThrough(this.blocks.nextStamp);
    this.blocks.reserve(-this.blocks.reserved);
    for (let i = this.pendingHead; i < this.pending.length; i++) this.pending[i]!.settled = true;
    this.pending = [];
    this.pendingHead = 0;
  }

  /**
   * For each stamp, 1 when the route of a request still in flight here gave it. Receipts are kept in
   * stamp order and each route's stamps are one run [firstStamp, firstStamp + touched), so a binary
   * search finds the only receipt that can hold it.
   */
  private pendingMask(stamps: Float64Array): Uint8Array {
    const out = new Uint8Array(stamps.length);
    const p = this.pending;
    const head = this.pendingHead;
    if (head >= p.length) return out;
    for (let j = 0; j < stamps.length; j++) {
      const s = stamps[j]!;
      if (s < p[head]!.firstStamp) continue;
      let lo = head;
      let hi = p.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (p[mid]!.firstStamp <= s) lo = mid;
        else hi = mid - 1;
      }
      const r = p[lo]!;
      if (!r.settled && s < r.firstStamp + r.touched) out[j] = 1;
    }
    return out;
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
