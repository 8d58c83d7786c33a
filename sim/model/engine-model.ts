/**
 * One inference engine instance with vLLM V1's scheduler, event-driven and
 * clock-free: the caller owns time (ms). The model runs whole engine steps:
 * a step that carries prefill is planned on its own; a run of decode-only
 * steps is taken in closed form up to the next scheduling point (a finish,
 * an arrival, an abort), so no per-token loop is needed.
 *
 * What it models, and where vLLM V1 is the reference:
 * - What goes into a step (scheduler.ts, after vLLM's Scheduler.schedule and
 *   KVCacheManager): the token budget, decodes first, chunked prefill, the
 *   prefix lookup when a waiting request is scheduled, and blocks reusable
 *   from the step that schedules them.
 * - The KV cache (kv-cache.ts, after vLLM's BlockPool): paged blocks, an LRU
 *   free queue, a hit takes a free block out of it, tail-first release.
 * - Time (step-time.ts): a step's time follows its batch. A request's first
 *   token comes out at the end of the step that computes its last prompt
 *   token, each later token one step later (decode-batch.ts). A request that
 *   arrives during a step waits for the next schedule(), which runs between
 *   steps; requests submitted at one instant share it (vllm/v1/engine/core.py:
 *   EngineCoreProc.run_busy_loop calls _process_input_queue, which takes in
 *   every request already delivered, before each _process_engine_step).
 *
 * - KV allocation (config.kvAllocation, scheduler.ts): "reserve" takes
 *   prompt + output at admission and never preempts; "incremental", the
 *   default (DEFAULT_KV_ALLOCATION in engine-config.ts, because it is what
 *   vLLM V1 does), allocates step by step as vLLM V1 does and preempts the
 *   last running request (recompute) when a running one cannot grow. A
 *   decode-only run then also ends before the first step whose blocks the
 *   free queue cannot give (the next scheduling point, where the preemption
 *   happens); the blocks of the steps in between are taken as those steps
 *   are reached (scheduler.growDecodes), so the cache reads between steps are exact.
 *
 * Simplifications, on purpose:
 * - "reserve" (selectable, the default before) is a simplification of vLLM:
 *   admission is a little conservative under memory pressure and there is no
 *   preemption.
 * - No async scheduling (vLLM can plan step n+1 while step n runs).
 * - Output tokens are never reusable (their keys are unknown here); vLLM
 *   caches generated full blocks too. Two copies of one block keep one owner
 *   (kv-cache.ts register); vLLM keeps both under the hash.
 * - An abort takes effect at once (vLLM handles it between steps): the step
 *   in progress keeps its planned time, and the blocks the request had
 *   scheduled stay cached.
 * - The last chunk of a short prefill is charged for its own size only (no
 *   padding to CUDA-graph batch sizes).
 */
import { DecodeBatch } from "./decode-batch";
import { kvAllocationOf, stepBudget, validateConfig } from "./engine-config";
import { BlockPool } from "./kv-cache";
import { type EngineReq, StepScheduler } from "./scheduler";
import { runMs, StepCost, stepsWithin } from "./step-time";
import type { EngineConfig, EngineEvent, EngineMetrics, EngineRequest } from "./types";

export class EngineModel {
  readonly config: EngineConfig;
  private readonly pool: BlockPool;
  private readonly bt: number;
  private readonly cost: StepCost;
  private readonly scheduler: StepScheduler;
  /** kvAllocation "incremental": blocks as each step needs them, with preemption. */
  private readonly incremental: boolean;

  private t = 0;
  private seq = 0;
  private readonly byId = new Map<string, EngineReq>();
  private readonly batch = new DecodeBatch<EngineReq>();

  // The run in progress: `runSteps` steps from `runStart`, step i lasting runA + runB·i.
  private busy = false;
  /** Steps completed before the run started. */
  private step = 0;
  private runStart = 0;
  private runSteps = 0;
  private runA = 0;
  private runB = 0;
  private runEnd = Number.POSITIVE_INFINITY;
  private pending: EngineEvent[] = [];

  private promptTokensTotal = 0;
  private generationTokensTotal = 0;
  private requestsFinished = 0;
  private prefillSeconds = 0;

  constructor(config: EngineConfig) {
    validateConfig(config);
    this.config = config;
    this.bt = config.blockTokens;
    this.pool = new BlockPool(Math.floor(config.kvCacheTokens / config.blockTokens));
    this.cost = new StepCost(config);
    this.incremental = kvAllocationOf(config) === "incremental";
    this.scheduler = new StepScheduler(
      this.pool,
      this.bt,
      stepBudget(config),
      config.maxRunning,
      this.incremental,
    );
  }

  /**
   * Makes this engine an exact, independent copy of `src` (same config): the
   * same clock, queue, running batch, run in progress, KV cache and pending
   * events, so stepping the copy forward gives what `src` would give, and
   * touches nothing of `src`. Every request is copied (they are mutable);
   * their block keys are shared (never written), and so are the slot arrays
   * of admitted requests (written only at admission). A waiting request's
   * slots are a scratch array admit() fills in full, so the copy starts
   * without one. Under "incremental" an admitted request's slots grow every
   * few steps, so the copy gets its own. This engine's pool arrays are
   * reused: sim/clairvoyant.ts copies every engine at every arrival.
   */
  copyFrom(src: EngineModel): this {
    if (src.config !== this.config && JSON.stringify(src.config) !== JSON.stringify(this.config))
      throw new Error("EngineModel.copyFrom: the engines' configs differ");
    const copies = new Map<EngineReq, EngineReq>();
    const copy = (r: EngineReq): EngineReq => {
      let c = copies.get(r);
      if (c === undefined) {
        const slots = r.phase === "waiting" ? null : this.incremental ? r.slots!.slice() : r.slots;
        c = { ...r, slots };
        copies.set(r, c);
      }
      return c;
    };
    this.pool.copyFrom(src.pool);
    this.scheduler.copyFrom(src.scheduler, copy);
    this.batch.copyFrom(src.batch, copy);
    this.byId.clear();
    for (const [id, r] of src.byId) this.byId.set(id, copy(r));
    this.t = src.t;
    this.seq = src.seq;
    this.busy = src.busy;
    this.step = src.step;
    this.runStart = src.runStart;
    this.runSteps = src.runSteps;
    this.runA = src.runA;
    this.runB = src.runB;
    this.runEnd = src.runEnd;
    this.pending = src.pending.slice();
    this.promptTokensTotal = src.promptTokensTotal;
    this.generationTokensTotal = src.generationTokensTotal;
    this.requestsFinished = src.requestsFinished;
    this.prefillSeconds = src.prefillSeconds;
    return this;
  }

  /**
   * Replaces every held request's output length by `belief(id, promptTokens)`
   * and re-derives what follows from it, as if the engine had been told those
   * lengths at submission: a waiting request's reservation (prompt + output,
   * taken at admission); an admitted request's reserved blocks (grown from the
   * free queue, evicting cached blocks LRU first as admission would, and
   * clipped to what is free: it is admitted, it holds at least what it got;
   * or the surplus released tail first); a decoding request's finish step, the
   * batch's finish order and the end of a decode-only run in progress. A belief
   * is clipped to what can fit the whole cache (fits()), and a decoding request
   * is believed to end no earlier than the step in progress (its stream is
   * still open: whoever holds the belief knows it is running). True lengths
   * leave the engine as it was. For sim/clairvoyant-knowledge.ts:
   * a copy (copyFrom) that knows only what a gateway knows of output lengths.
   */
  reviseOutputs(belief: (id: string, promptTokens: number) => number): this {
    const bt = this.bt;
    const pool = this.pool;
    const done = this.stepsBy(this.t);
    const top = this.batch.peek();
    // A decode-only run ends at the first finish, unless an arrival cut it short (scheduleSoon).
    const decodeRun =
      this.busy && this.runSteps > 0 && this.scheduler.chunked.length === 0 && top !== undefined;
    const cutShort = decodeRun && this.runSteps < top.finishStep - this.step;
    let reorder = false;
    for (const r of this.byId.values()) {
      const m = r as { -readonly [K in keyof EngineReq]: EngineReq[K] };
      let out = Math.max(1, Math.floor(belief(r.id, r.promptTokens)));
      out = Math.min(out, pool.numBlocks * bt - r.promptTokens);
      // A preempted request has emitted `generated` tokens already: its stream is open.
      out = Math.max(out, r.generated + 1);
      // Still in the batch: its last token comes at the end of a step of the run in progress or later.
      if (r.phase === "decode") out = Math.max(out, Math.max(done, this.step + 1) - r.startStep + 1);
      const total = Math.ceil((r.promptTokens + out) / bt);
      if (this.incremental) {
        // Blocks follow the steps taken, not the output length: only the slot array's size does.
        m.totalBlocks = total;
        if (r.slots !== null && r.slots.length < total) {
          const slots = new Int32Array(total);
          slots.set(r.slots);
          m.slots = slots;
        }
      } else if (r.phase === "waiting") {
        m.totalBlocks = total;
        m.slots = null; // admit() sizes its slot array by totalBlocks
      } else if (total > r.totalBlocks) {
        const extra = Math.min(total - r.totalBlocks, pool.numFree);
        const slots = new Int32Array(r.totalBlocks + extra);
        slots.set(r.slots!.subarray(0, r.totalBlocks));
        pool.allocate(extra, slots, r.totalBlocks);
        m.slots = slots;
        m.totalBlocks = r.totalBlocks + extra;
        m.held = m.totalBlocks;
      } else if (total < r.totalBlocks) {
        pool.release(r.slots!.subarray(total, r.totalBlocks), r.totalBlocks - total);
        m.slots = r.slots!.slice(0, total);
        m.totalBlocks = total;
        m.held = total;
      }
      m.outputTokens = out;
      if (r.phase === "decode" && r.finishStep !== r.startStep + out - 1) {
        m.finishStep = r.startStep + out - 1;
        reorder = true;
      }
    }
    if (reorder) this.batch.reorder();
    if (decodeRun) {
      const first = this.batch.peek()!.finishStep - this.step;
      this.runSteps = cutShort ? Math.min(this.runSteps, first) : first;
      if (this.incremental) this.runSteps = this.growthSteps(this.runSteps);
      this.runEnd = Math.max(this.t, this.runStart + runMs(this.runA, this.runB, this.runSteps));
    }
    return this;
  }

  /** True when a request of this size can ever be admitted (its prompt + output fit the whole KV cache). */
  fits(promptTokens: number, outputTokens: number): boolean {
    return Math.ceil((promptTokens + outputTokens) / this.bt) <= this.pool.numBlocks;
  }

  submit(req: EngineRequest, now: number): void {
    const { id, promptTokens, outputTokens } = req;
    if (!Number.isInteger(promptTokens) || promptTokens < 1)
      throw new RangeError(`request ${id}: promptTokens must be a positive integer, got ${promptTokens}`);
    if (!Number.isInteger(outputTokens) || outputTokens < 1)
      throw new RangeError(`request ${id}: outputTokens must be a positive integer, got ${outputTokens}`);
    if (!this.fits(promptTokens, outputTokens))
      throw new RangeError(
        `request ${id}: ${promptTokens + outputTokens} tokens can never fit a KV cache of ${this.pool.numBlocks * this.bt}`,
      );
    if (this.byId.has(id)) throw new Error(`request ${id} is already in the engine`);
    this.advanceTo(now);
    const r: EngineReq = {
      id,
      blocks: req.blocks,
      promptTokens,
      outputTokens,
      seq: this.seq++,
      totalBlocks: Math.ceil((promptTokens + outputTokens) / this.bt),
      keyed: Math.min(req.blocks.length, Math.floor(promptTokens / this.bt)),
      phase: "waiting",
      slots: null,
      held: 0,
      target: promptTokens,
      generated: 0,
      preempted: 0,
      hitBlocks: 0,
      computed: 0,
      registered: 0,
      startStep: 0,
      finishStep: 0,
    };
    this.byId.set(id, r);
    this.scheduler.enqueue(r);
    this.scheduleSoon();
  }

  /** When the next step boundary that changes anything comes (ms); Infinity when idle. */
  nextEventTime(): number {
    return this.pending.length > 0 ? this.t : this.runEnd;
  }

  /**
   * Processes everything up to and including `now` (the schedule() of a step
   * boundary at `now` too) and returns the events that happened, in time order.
   */
  advance(now: number): EngineEvent[] {
    this.advanceTo(now, true);
    const out = this.pending;
    this.pending = [];
    return out;
  }

  /**
   * Output tokens produced so far by a running request (0 while waiting or
   * prefilling, and for ids the engine no longer holds). Call advance(now)
   * first: this projects the run in progress only.
   */
  tokensGenerated(id: string, now: number): number {
    const r = this.byId.get(id);
    if (r === undefined) return 0;
    if (r.phase !== "decode") return r.generated;
    return Math.min(r.outputTokens, 1 + this.stepsBy(now) - r.startStep);
  }

  /** The client went away: drop the request and free its blocks (no event is emitted for it). */
  abort(id: string, now: number): void {
    this.advanceTo(now);
    const r = this.byId.get(id);
    if (r === undefined) return;
    this.byId.delete(id);
    if (r.phase === "decode") {
      this.generationTokensTotal += Math.min(r.outputTokens, 1 + this.stepsBy(now) - r.startStep);
      this.batch.remove(r);
      this.scheduler.leave(r);
    } else {
      this.generationTokensTotal += r.generated;
      this.scheduler.drop(r);
    }
    if (r.phase !== "waiting") this.pool.release(r.slots!, r.held);
    r.phase = "gone";
    this.scheduleSoon();
  }

  /** Exact longest run of leading blocks cached right now (read-only: no LRU touch). */
  cachedPrefixBlocks(blocks: readonly number[]): number {
    return this.pool.longestPrefix(blocks);
  }

  metrics(now: number): EngineMetrics {
    this.advanceTo(now);
    const pool = this.pool;
    return {
      running: this.scheduler.prefilling + this.batch.size,
      waiting: this.scheduler.waitingCount,
      kvUsage: 1 - pool.numFree / pool.numBlocks,
      prefixQueryTokens: this.scheduler.queryTokens,
      prefixHitTokens: this.scheduler.hitTokens,
      promptTokensTotal: this.promptTokensTotal,
      generationTokensTotal: this.generationTokensTotal,
      requestsFinished: this.requestsFinished,
      prefillSeconds: this.prefillSeconds,
      preemptions: this.scheduler.preemptions,
    };
  }

  // ---- internals -------------------------------------------------------

  /**
   * Runs the step boundaries before `now` (and the one at `now` when
   * `inclusive`). submit, abort and the readers leave a boundary at `now`
   * for advance(), so every request submitted at one instant is in the queue
   * when that boundary's schedule() runs, as vLLM's engine loop drains its
   * input queue before it schedules a step.
   */
  private advanceTo(now: number, inclusive = false): void {
    if (!(now >= this.t)) {
      if (Number.isNaN(now)) throw new RangeError("now is NaN");
      return; // time never runs backwards here: an earlier `now` is treated as the current time
    }
    while (this.runEnd < now || (inclusive && this.runEnd === now)) this.endRun();
    // The step in progress at `now` has been scheduled: its blocks are taken.
    if (this.incremental && this.busy && this.runSteps > 1 && this.scheduler.chunked.length === 0)
      this.scheduler.growDecodes(Math.min(this.stepsBy(now) + 1, this.step + this.runSteps));
    this.t = now;
  }

  /**
   * "incremental": how many of the next `steps` decode-only steps the free
   * queue can give every decoding request its blocks for; the run ends
   * before the first it cannot, where schedule() preempts. At least 1 (the
   * step just scheduled holds its blocks).
   */
  private growthSteps(steps: number): number {
    const free = this.pool.numFree;
    const demand = (steps: number): number => this.scheduler.decodeDemand(this.step + steps);
    if (steps <= 1 || demand(steps) <= free) return steps;
    let lo = 1; // demand(lo) ≤ free
    let hi = steps; // demand(hi) > free
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      if (demand(mid) <= free) lo = mid;
      else hi = mid;
    }
    return lo;
  }

  /** Steps completed by `now` (within the run in progress). */
  private stepsBy(now: number): number {
    if (!this.busy || this.runSteps === 0 || !(now > this.runStart)) return this.step;
    return this.step + Math.min(this.runSteps, stepsWithin(this.runA, this.runB, now - this.runStart));
  }

  /**
   * Something changed between steps (an arrival, an abort): an idle engine
   * schedules a step now (an empty run that ends at once); a decode-only run
   * stops at the end of the step in progress, where schedule() runs again.
   */
  private scheduleSoon(): void {
    const now = this.t;
    if (!this.busy) {
      this.busy = true;
      this.runStart = now;
      this.runSteps = 0;
      this.runEnd = now;
      return;
    }
    if (this.runSteps <= 1) return;
    const steps = Math.min(this.runSteps, stepsWithin(this.runA, this.runB, now - this.runStart) + 1);
    this.runSteps = steps;
    // Float rounding must not put the boundary before the present.
    this.runEnd = Math.max(now, this.runStart + runMs(this.runA, this.runB, steps));
  }

  /** The boundary at runEnd: outputs of the last step, then the next schedule(). */
  private endRun(): void {
    const end = this.runEnd;
    this.t = end;
    this.step += this.runSteps;
    if (this.incremental && this.runSteps > 1) this.scheduler.growDecodes(this.step);
    for (const r of this.scheduler.chunked)
      if (r.phase === "prefill" && r.computed === r.target) this.completePrefill(r);
    for (
      let top = this.batch.peek();
      top !== undefined && top.finishStep <= this.step;
      top = this.batch.peek()
    ) {
      this.batch.pop();
      this.finish(top);
    }
    this.runStart = end;
    this.schedule();
  }

  /** Composes the next step (scheduler.ts) and times it. */
  private schedule(): void {
    let preempted = false;
    if (this.incremental)
      preempted = this.scheduler.growRunning(this.step + 1, this.batch.size, (r) => this.batch.remove(r));
    const prefillTokens = this.scheduler.schedule(this.batch.size, !preempted);
    this.prefillSeconds += this.cost.prefillSeconds(prefillTokens);
    this.plan(prefillTokens);
  }

  /** Times the step (or the decode-only run) that schedule() just composed. */
  private plan(prefillTokens: number): void {
    const nDec = this.batch.size;
    const chunks = this.scheduler.chunked.length;
    if (chunks === 0 && nDec === 0) {
      this.busy = false;
      this.runSteps = 0;
      this.runEnd = Number.POSITIVE_INFINITY;
      return;
    }
    this.busy = true;
    this.runA = this.cost.stepMs(nDec, this.batch.context(this.step), prefillTokens);
    if (chunks > 0) {
      this.runB = 0;
      this.runSteps = 1;
    } else {
      // Decode only: the batch stays as it is until the first finish.
      this.runB = this.cost.growthMs(nDec);
      this.runSteps = this.batch.peek()!.finishStep - this.step;
      if (this.incremental) this.runSteps = this.growthSteps(this.runSteps);
    }
    this.runEnd = this.runStart + runMs(this.runA, this.runB, this.runSteps);
  }

  private completePrefill(r: EngineReq): void {
    this.scheduler.promptDone(r);
    if (r.generated === 0) {
      this.promptTokensTotal += r.promptTokens;
      this.pending.push({ kind: "first_token", id: r.id, time: this.t, cachedTokens: r.hitBlocks * this.bt });
      r.startStep = this.step;
    } else {
      // Resumed after a preemption: this step sampled output token generated + 1, nothing is re-emitted.
      r.startStep = this.step - r.generated;
    }
    r.finishStep = r.startStep + r.outputTokens - 1;
    this.batch.add(r);
  }

  private finish(r: EngineReq): void {
    this.pool.release(r.slots!, r.held);
    this.scheduler.leave(r);
    this.byId.delete(r.id);
    r.phase = "gone";
    this.generationTokensTotal += r.outputTokens;
    this.requestsFinished++;
    this.pending.push({
      kind: "done",
      id: r.id,
      time: this.t,
      cachedTokens: r.hitBlocks * this.bt,
      outputTokens: r.outputTokens,
    });
  }
}

export { DEFAULT_ENGINE_CONFIG, ENGINE_PRESETS } from "./presets";
