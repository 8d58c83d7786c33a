/**
 * The composition of one engine step, as vLLM V1's scheduler makes it
 * (vllm-project/vllm, vllm/v1/core/): who gets how many tokens, when a
 * waiting request's prefix is looked up, and when blocks become reusable.
 *
 * - Step budget. Scheduler.schedule() gives each step max_num_batched_tokens
 *   tokens. RUNNING requests go first, in the order they were admitted: a
 *   decoding request takes one token, a request part-way through its prompt
 *   min(rest of prompt, budget left). Then WAITING requests, first come first
 *   served, while token_budget > 0 and fewer than max_num_seqs run; each
 *   takes min(uncached prompt, budget left): chunked prefill. A waiting
 *   request whose blocks do not fit stops the queue (allocate_slots returns
 *   None → break). long_prefill_token_threshold stays 0 by default
 *   (vllm/config/scheduler.py: SchedulerConfig.__post_init__ sets it only for
 *   max_num_partial_prefills > 1) and max_num_batched_tokens ≥ max_num_seqs
 *   (SchedulerConfig.verify_max_model_len), so every decode gets its token
 *   each step and at most one request is part-way through its prompt between
 *   steps: the last one admitted, which took the rest of the budget.
 *   Requests that arrive together are admitted over consecutive steps once
 *   their prefill fills a step.
 * - Prefix lookup when scheduled. A waiting request is looked up at the
 *   moment schedule() reaches it (KVCacheManager.get_computed_blocks): the
 *   longest run of leading full blocks whose hashes are cached
 *   (FullAttentionManager.find_longest_cache_hit), capped at prompt − 1
 *   tokens (max_cache_hit_length = num_tokens − 1), so a fully cached prompt
 *   still recomputes its last block. That hit becomes the request's
 *   num_cached_tokens, reported as usage.prompt_tokens_details.cached_tokens.
 * - Blocks reusable from the step that schedules them.
 *   KVCacheManager.allocate_slots ends with cache_blocks(request,
 *   num_computed_tokens + num_new_tokens) (capped at request.num_tokens);
 *   SingleTypeKVCacheManager.cache_blocks → BlockPool.cache_full_blocks
 *   registers every block those tokens fill, before the forward pass runs.
 *   A request scheduled later in the same step, or in any later step, reuses
 *   them; a long prompt becomes reusable chunk by chunk.
 *
 * Not modelled: preemption (a request reserves KV for prompt + output when
 * admitted; vLLM allocates step by step and preempts the last running request
 * when it runs out), long_prefill_token_threshold and parallel partial
 * prefills, priority scheduling.
 */
import type { Decoding } from "./decode-batch";
import type { BlockPool } from "./kv-cache";

export type Phase = "waiting" | "prefill" | "decode" | "gone";

/** A request inside the engine, from submission to its end. */
export interface EngineReq extends Decoding {
  readonly id: string;
  readonly blocks: readonly number[];
  readonly outputTokens: number;
  /** Blocks for prompt + output. */
  readonly totalBlocks: number;
  /** Prompt blocks that have keys (full blocks listed in `blocks`). */
  readonly keyed: number;
  phase: Phase;
  slots: Int32Array | null;
  hitBlocks: number;
  /** Prompt tokens cached or scheduled so far (vLLM's num_computed_tokens once a step is scheduled). */
  computed: number;
  /** Leading blocks registered in the prefix cache (vLLM's num_cached_block). */
  registered: number;
}

export class StepScheduler {
  private waiting: EngineReq[] = [];
  private waitHead = 0;
  /** The request part-way through its prompt between steps (at most one: see the header). */
  private partial: EngineReq | null = null;
  private admitted = 0;
  /** Requests given a prefill chunk in the step last composed. */
  readonly chunked: EngineReq[] = [];
  /** Cumulative prompt tokens looked up, and found (vllm:prefix_cache_queries / _hits). */
  queryTokens = 0;
  hitTokens = 0;

  constructor(
    private readonly pool: BlockPool,
    private readonly blockTokens: number,
    private readonly budget: number,
    private readonly maxRunning: number,
  ) {}

  /**
   * Makes this scheduler a copy of `src`, each request mapped by `map` (to its
   * copy); this scheduler keeps its own pool, which the caller copies.
   */
  copyFrom(src: StepScheduler, map: (r: EngineReq) => EngineReq): void {
    this.waiting = src.waiting.slice(src.waitHead).map(map);
    this.waitHead = 0;
    this.partial = src.partial === null ? null : map(src.partial);
    this.admitted = src.admitted;
    this.chunked.length = 0;
    for (const r of src.chunked) this.chunked.push(map(r));
    this.queryTokens = src.queryTokens;
    this.hitTokens = src.hitTokens;
  }

  get waitingCount(): number {
    return this.waiting.length - this.waitHead;
  }

  /** Requests admitted and not yet through their prompt. */
  get prefilling(): number {
    return this.admitted;
  }

  /** A request's last prompt chunk was computed: it decodes from now on. */
  promptDone(r: EngineReq): void {
    r.phase = "decode";
    this.admitted--;
  }

  enqueue(r: EngineReq): void {
    this.waiting.push(r);
  }

  /** Forgets a request that is leaving before its prompt was through (an abort). */
  drop(r: EngineReq): void {
    if (r.phase === "waiting") {
      this.waiting.splice(this.waiting.indexOf(r, this.waitHead), 1);
    } else if (r.phase === "prefill") {
      this.admitted--;
      if (this.partial === r) this.partial = null;
    }
  }

  /**
   * Composes the next step given `decoding` running decodes: the partial
   * prefill, then waiting requests while the budget lasts. Fills `chunked`
   * and returns the prefill tokens scheduled.
   */
  schedule(decoding: number): number {
    this.chunked.length = 0;
    let budget = this.budget - decoding;
    let tokens = 0;
    const partial = this.partial;
    if (partial !== null && budget > 0) {
      const n = Math.min(partial.promptTokens - partial.computed, budget);
      this.giveChunk(partial, n);
      tokens += n;
      budget -= n;
    }
    while (budget > 0 && this.waitHead < this.waiting.length) {
      if (this.admitted + decoding >= this.maxRunning) break;
      const r = this.waiting[this.waitHead]!;
      if (!this.admit(r)) break;
      this.waitHead++;
      const n = Math.min(r.promptTokens - r.computed, budget);
      this.giveChunk(r, n);
      tokens += n;
      budget -= n;
    }
    if (this.waitHead > 64 && this.waitHead * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.waitHead);
      this.waitHead = 0;
    }
    return tokens;
  }

  /**
   * get_computed_blocks + allocate_slots for a waiting request: looks up its
   * cached prefix now, pins it and reserves the rest; false when its blocks
   * do not fit (it stays at the head of the queue).
   */
  private admit(r: EngineReq): boolean {
    const pool = this.pool;
    const bt = this.blockTokens;
    const maxHit = Math.min(r.keyed, Math.floor((r.promptTokens - 1) / bt));
    // A blocked head is retried at every scheduling point: reuse its slot
    // array, and skip the lookup when even a full hit could not make it fit.
    if (r.totalBlocks - maxHit > pool.numFree) return false;
    const slots = r.slots ?? new Int32Array(r.totalBlocks);
    r.slots = slots;
    const hit = pool.match(r.blocks, maxHit, slots);
    const need = r.totalBlocks - hit;
    if (need > pool.numFree - pool.lastMatchFree) return false;
    pool.pinSlots(slots, hit);
    pool.allocate(need, slots, hit);
    r.hitBlocks = hit;
    r.registered = hit;
    r.computed = hit * bt;
    r.phase = "prefill";
    this.admitted++;
    this.queryTokens += r.promptTokens;
    this.hitTokens += hit * bt;
    return true;
  }

  /** Gives `r` a chunk of `n` prompt tokens in this step and registers the full blocks it fills (cache_blocks). */
  private giveChunk(r: EngineReq, n: number): void {
    r.computed += n;
    const full = Math.min(r.keyed, Math.floor(r.computed / this.blockTokens));
    const slots = r.slots!;
    for (let i = r.registered; i < full; i++) this.pool.register(slots[i]!, r.blocks[i]!);
    r.registered = Math.max(r.registered, full);
    this.partial = r.computed < r.promptTokens ? r : null;
    this.chunked.push(r);
  }
}
