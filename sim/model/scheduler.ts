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
 * - KV allocation, two ways (EngineConfig.kvAllocation):
 *   "reserve": a request reserves KV for prompt + output when admitted, so
 *   nothing is ever preempted; admission is conservative.
 *   "incremental" (the default, DEFAULT_KV_ALLOCATION), as vLLM V1 does it: KVCacheManager.allocate_slots gives a
 *   request the blocks for the tokens scheduled in this step only (a waiting
 *   request: its cached prefix plus its first chunk; a running one: its next
 *   chunk or its one decode token), and returns None when the free queue
 *   (cached unreferenced blocks included) is short. A waiting request is
 *   admitted only if its whole input sequence would fit
 *   (full_sequence_must_fit, SchedulerConfig.scheduler_reserve_full_isl,
 *   default True in current vLLM; older releases checked the first chunk
 *   only); the watermark defaults to 0; no lookahead without speculative
 *   decoding. In Scheduler.schedule() a RUNNING
 *   request that cannot get its blocks preempts the last request of the
 *   running list (FCFS policy: self.running.pop(), the latest admitted or
 *   resumed), over and over, until it fits or it is the one popped.
 *   Scheduler._preempt_request frees the victim's blocks
 *   (KVCacheManager.free: tail first, their hashes stay, so they remain
 *   reusable from the free queue until evicted), sets num_computed_tokens to
 *   0, counts num_preemptions and puts the request at the FRONT of the waiting
 *   queue (prepend_request). When anything was preempted in a step, no waiting
 *   request is admitted in it (`if not preempted_reqs`). A resumed request is
 *   looked up and prefilled again like a new one, over its prompt and the
 *   tokens it had generated (request.num_tokens); the step that computes its
 *   last token samples its next output token, so nothing is emitted twice.
 *   vLLM counts preemptions in vllm:num_preemptions (SchedulerStats /
 *   IterationStats.num_preempted_reqs).
 *   Not modelled there: the generated tokens' own full blocks are not keyed
 *   here (see engine-model.ts), so a resumed request recomputes its output
 *   where vLLM may hit the blocks it freed; they are freed tail first and
 *   preemption means the free queue is empty, so they are the first evicted.
 *
 * Not modelled: long_prefill_token_threshold and parallel partial prefills,
 * priority scheduling.
 */
import type { Decoding } from "./decode-batch";
import type { BlockPool } from "./kv-cache";

export type Phase = "waiting" | "prefill" | "decode" | "gone";

/** A request inside the engine, from submission to its end. */
export interface EngineReq extends Decoding {
  readonly id: string;
  readonly blocks: readonly number[];
  readonly outputTokens: number;
  /** Blocks for prompt + output: what "reserve" takes at admission, and the size of the slot array. */
  readonly totalBlocks: number;
  /** Blocks held now: slots[0..held). totalBlocks once admitted under "reserve". */
  held: number;
  /** Tokens to compute before the next output token: the prompt, or prompt + generated for a resumed request. */
  target: number;
  /** Output tokens emitted before its last preemption (0 for a request never preempted). */
  generated: number;
  /** Times it was preempted (vLLM's request.num_preemptions). */
  preempted: number;
  /** Prompt blocks that have keys (full blocks listed in `blocks`). */
  readonly keyed: number;
  phase: Phase;
  slots: Int32Array | null;
  hitBlocks: number;
  /** Tokens of `target` cached or scheduled so far (vLLM's num_computed_tokens once a step is scheduled). */
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
  /**
   * "incremental" only: admitted requests (prefilling or decoding) in the
   * order they were admitted or resumed, vLLM's self.running; the victim of a
   * preemption is the last one.
   */
  readonly running: EngineReq[] = [];
  /** Requests given a prefill chunk in the step last composed. */
  readonly chunked: EngineReq[] = [];
  /** Cumulative prompt tokens looked up, and found (vllm:prefix_cache_queries / _hits). */
  queryTokens = 0;
  hitTokens = 0;
  /** Cumulative preemptions (vllm:num_preemptions). */
  preemptions = 0;

  constructor(
    private readonly pool: BlockPool,
    private readonly blockTokens: number,
    private readonly budget: number,
    private readonly maxRunning: number,
    readonly incremental: boolean,
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
    this.running.length = 0;
    for (const r of src.running) this.running.push(map(r));
    this.chunked.length = 0;
    for (const r of src.chunked) this.chunked.push(map(r));
    this.queryTokens = src.queryTokens;
    this.hitTokens = src.hitTokens;
    this.preemptions = src.preemptions;
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

  /** A running request finished or was aborted: it leaves the running list ("incremental"). */
  leave(r: EngineReq): void {
    if (!this.incremental) return;
    const i = this.running.lastIndexOf(r);
    if (i >= 0) this.running.splice(i, 1);
  }

  /** Forgets a request that is leaving before its prompt was through (an abort). */
  drop(r: EngineReq): void {
    if (r.phase === "waiting") {
      this.waiting.splice(this.waiting.indexOf(r, this.waitHead), 1);
    } else if (r.phase === "prefill") {
      this.admitted--;
      if (this.partial === r) this.partial = null;
      this.leave(r);
    }
  }

  /**
   * "incremental": the RUNNING half of Scheduler.schedule() for the step that
   * will be engine step `step`: in running order, each decoding request gets
   * the blocks for its token of this step, the partial prefill those for its
   * next chunk; when one cannot, the last running request is preempted, until
   * it fits or is itself preempted (then the loop stops, as vLLM's `break`).
   * Preempted decoding requests are handed to `onPreempt` (the engine takes
   * them out of its batch) before their state is reset. Returns whether any
   * request was preempted (no waiting request is admitted then).
   */
  growRunning(step: number, decoding: number, onPreempt: (r: EngineReq) => void): boolean {
    const bt = this.blockTokens;
    const pool = this.pool;
    const running = this.running;
    let preempted = false;
    for (let i = 0; i < running.length; i++) {
      const r = running[i]!;
      const blocks =
        r.phase === "decode"
          ? this.blocksAt(r, step)
          : Math.ceil((r.computed + Math.min(r.target - r.computed, this.budget - decoding)) / bt);
      const need = blocks - r.held;
      let self = false;
      while (need > pool.numFree) {
        const victim = running.pop()!;
        this.preempt(victim, step, onPreempt);
        preempted = true;
        if (victim === r) {
          self = true;
          break;
        }
      }
      if (self) break;
      this.take(r, need);
    }
    return preempted;
  }

  /**
   * "incremental": every decoding request takes the blocks of the steps up
   * to engine step `step` (allocate_slots at each of those steps' schedule()),
   * within a decode-only run planned so that they are free (decodeDemand).
   */
  growDecodes(step: number): void {
    for (const r of this.running) if (r.phase === "decode") this.take(r, this.blocksAt(r, step) - r.held);
  }

  /** "incremental": the blocks the decoding requests still need to take to reach engine step `step`. */
  decodeDemand(step: number): number {
    let d = 0;
    for (const r of this.running) if (r.phase === "decode") d += Math.max(0, this.blocksAt(r, step) - r.held);
    return d;
  }

  /**
   * Blocks a decoding request holds after engine step `step` has been
   * scheduled ("incremental"): those for its prompt and the output tokens
   * computed by then.
   */
  private blocksAt(r: EngineReq, step: number): number {
    return Math.ceil((r.promptTokens + step - r.startStep) / this.blockTokens);
  }

  /** Gives a running request `need` more blocks after those it holds (none when need ≤ 0). */
  private take(r: EngineReq, need: number): void {
    if (need <= 0) return;
    this.pool.allocate(need, r.slots!, r.held);
    r.held += need;
  }

  /** Scheduler._preempt_request: free its blocks tail first, recompute from scratch, front of the queue. */
  private preempt(r: EngineReq, step: number, onPreempt: (r: EngineReq) => void): void {
    if (r.phase === "decode") {
      onPreempt(r);
      // Tokens out by the end of step − 1: the first at startStep, one per step since.
      r.generated = step - r.startStep;
      r.target = r.promptTokens + r.generated;
    } else {
      this.admitted--;
      if (this.partial === r) this.partial = null;
    }
    this.pool.release(r.slots!, r.held);
    r.held = 0;
    r.computed = 0;
    r.registered = 0;
    r.phase = "waiting";
    r.preempted++;
    this.preemptions++;
    if (this.waitHead > 0) this.waiting[--this.waitHead] = r;
    else this.waiting.unshift(r);
  }

  /**
   * Composes the next step given `decoding` running decodes: the partial
   * prefill, then waiting requests while the budget lasts (none when
   * `admit` is false: a preemption this step). Fills `chunked` and returns
   * the prefill tokens scheduled.
   */
  schedule(decoding: number, admitWaiting = true): number {
    this.chunked.length = 0;
    let budget = this.budget - decoding;
    let tokens = 0;
    const partial = this.partial;
    if (partial !== null && budget > 0) {
      const n = Math.min(partial.target - partial.computed, budget);
      this.giveChunk(partial, n);
      tokens += n;
      budget -= n;
    }
    while (admitWaiting && budget > 0 && this.waitHead < this.waiting.length) {
      if (this.admitted + decoding >= this.maxRunning) break;
      const r = this.waiting[this.waitHead]!;
      if (!(this.incremental ? this.admitChunk(r, budget) : this.admit(r))) break;
      this.waitHead++;
      const n = Math.min(r.target - r.computed, budget);
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
    this.enter(r, hit, need);
    return true;
  }

  /**
   * "incremental": get_computed_blocks + allocate_slots for a waiting request's
   * first chunk only (at most `budget` tokens past its cached prefix); false
   * when its whole input (prompt, or prompt + generated when resumed) does not
   * fit the free queue: allocate_slots(full_sequence_must_fit=True), which
   * the waiting loop passes when SchedulerConfig.scheduler_reserve_full_isl
   * (default True) is set; the watermark (SchedulerConfig.watermark) is 0 by
   * default. A resumed request is looked up again over
   * its recompute (`target`); its first lookup stays its reported hit
   * (vLLM sets num_cached_tokens once) and in the prefix-cache counters.
   */
  private admitChunk(r: EngineReq, budget: number): boolean {
    const pool = this.pool;
    const bt = this.blockTokens;
    const maxHit = Math.min(r.keyed, Math.floor((r.target - 1) / bt));
    if (r.slots === null || r.slots.length < r.totalBlocks) {
      const slots = new Int32Array(r.totalBlocks);
      if (r.slots !== null) slots.set(r.slots.subarray(0, Math.min(r.slots.length, r.totalBlocks)));
      r.slots = slots;
    }
    const slots = r.slots;
    const hit = pool.match(r.blocks, maxHit, slots);
    const room = pool.numFree - pool.lastMatchFree;
    // scheduler_reserve_full_isl (default on): the whole input sequence must fit, not only the first chunk.
    if (Math.ceil(r.target / bt) - hit > room) return false;
    const upTo = hit * bt + Math.min(r.target - hit * bt, budget);
    this.enter(r, hit, Math.ceil(upTo / bt) - hit);
    this.running.push(r);
    return true;
  }

  /**
   * Admits `r` (both allocations): pins its `hit` cached blocks, takes `need`
   * more after them, and starts its prefill past the hit. Its first lookup is
   * its reported hit and counts in the prefix-cache counters; a resumed
   * request's ("incremental") does not (vLLM sets num_cached_tokens once).
   */
  private enter(r: EngineReq, hit: number, need: number): void {
    const bt = this.blockTokens;
    this.pool.pinSlots(r.slots!, hit);
    this.pool.allocate(need, r.slots!, hit);
    r.held = hit + need;
    if (r.preempted === 0) {
      r.hitBlocks = hit;
      this.queryTokens += r.promptTokens;
      this.hitTokens += hit * bt;
    }
    r.registered = hit;
    r.computed = hit * bt;
    r.phase = "prefill";
    this.admitted++;
  }

  /** Gives `r` a chunk of `n` tokens in this step and registers the full prompt blocks it fills (cache_blocks). */
  private giveChunk(r: EngineReq, n: number): void {
    r.computed += n;
    const full = Math.min(r.keyed, Math.floor(r.computed / this.blockTokens));
    const slots = r.slots!;
    for (let i = r.registered; i < full; i++) this.pool.register(slots[i]!, r.blocks[i]!);
    r.registered = Math.max(r.registered, full);
    this.partial = r.computed < r.target ? r : null;
    this.chunked.push(r);
  }
}
