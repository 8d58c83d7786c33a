/**
 * One inference engine instance (vLLM V1 semantics), event-driven and
 * clock-free: the caller owns time (ms) and the model advances in closed form
 * between events. Batch composition changes only on arrival, admission,
 * prefill completion, finish and abort; between two such events every rate is
 * constant, so no per-token or per-step loop is needed.
 *
 * What it models, and where vLLM is the reference:
 * - KV cache: paged blocks, prefix hits on the longest run of leading full
 *   blocks, LRU eviction of unreferenced blocks, tail-first release
 *   (see kv-cache.ts). A hit never covers the whole prompt: vLLM recomputes
 *   at least the last token to get logits (max_cache_hit_length = tokens - 1).
 * - Scheduling: FCFS. The head of the waiting queue is admitted while fewer
 *   than maxRunning requests run and its blocks fit; otherwise it waits and
 *   blocks the queue (vLLM's FCFS policy stops at the first request it cannot
 *   allocate). Hits are looked up at admission, as vLLM does when it schedules
 *   a waiting request.
 * - Steps: each engine step carries one token per decoding sequence plus
 *   prefill chunks FCFS up to maxBatchedTokens (chunked prefill). Step time =
 *   decodeStepBaseMs + decodeStepPerSeqMs·decoding + decodeStepPerKTokenMs·
 *   context/1000 + chunk/prefillTokensPerSec, so prefill slows decode and a
 *   full batch slows prefill, as mixed batches do on a real GPU. Steps are
 *   treated as a fluid: progress is elapsed/stepTime, not whole steps.
 * - The prefill step emits the first token (TTFT = end of prefill); each
 *   later token takes one step.
 *
 * Simplifications, on purpose:
 * - A request reserves KV for prompt + output at admission, so there is no
 *   preemption (vLLM allocates decode blocks lazily and preempts by
 *   recomputation when it runs out). Admission is therefore a little
 *   conservative under memory pressure, and nothing is ever recomputed.
 * - Computed prompt blocks become reusable when the request's prefill
 *   completes (vLLM caches them chunk by chunk), so a concurrent identical
 *   prompt that arrives mid-prefill finds nothing yet. Output tokens are never
 *   reusable (their keys are unknown here); an aborted prefill caches nothing.
 * - The step-time inputs (context, chunk size) are taken at the start of each
 *   interval between events, and the last chunk of a short prefill is charged
 *   for its own size only (no padding to the budget).
 */
import { Heap } from "../heap";
import { BlockPool } from "./kv-cache";
import type { EngineConfig, EngineEvent, EngineMetrics, EngineRequest } from "./types";

/** vLLM's max_num_batched_tokens default for the API server on GPUs with ≥70 GiB (arg_utils.py get_batch_defaults). */
export const DEFAULT_MAX_BATCHED_TOKENS = 8192;

type Phase = "waiting" | "prefill" | "decode";

interface Req {
  readonly id: string;
  readonly blocks: readonly number[];
  readonly promptTokens: number;
  readonly outputTokens: number;
  readonly seq: number;
  /** Blocks for prompt + output. */
  readonly totalBlocks: number;
  /** Prompt blocks that have keys (full blocks listed in `blocks`). */
  readonly keyed: number;
  phase: Phase;
  slots: Int32Array | null;
  hitBlocks: number;
  prefillLeft: number;
  startStep: number;
  finishStep: number;
}

/**
 * Decoding requests by the decode-step count at which they finish, ties by
 * admission order. The engine keeps one global step counter, so a request's
 * finish never moves once it starts decoding.
 */
function finishesFirst(a: Req, b: Req): boolean {
  return a.finishStep < b.finishStep || (a.finishStep === b.finishStep && a.seq < b.seq);
}

const NO_EVENT = 0;
const PREFILL_DONE = 1;
const DECODE_DONE = 2;
/** Float slack when deciding that a prefill or a decode has reached its end. */
const EPS_TOKENS = 1e-6;
const EPS_STEPS = 1e-7;

export class EngineModel {
  readonly config: EngineConfig;
  private readonly pool: BlockPool;
  private readonly bt: number;
  private readonly budget: number;
  private readonly perKTokMs: number;
  private readonly prefillPerMs: number;

  private t = 0;
  private seq = 0;
  private readonly byId = new Map<string, Req>();
  private waiting: Req[] = [];
  private waitHead = 0;
  private prefilling: Req[] = [];
  private pfHead = 0;
  private readonly decoding = new Heap<Req>(finishesFirst);
  /** Global decode-step counter: every decoding sequence gains one token per step. */
  private step = 0;
  private nDec = 0;
  private decPromptSum = 0;
  private decStartSum = 0;
  private stepMs = Number.POSITIVE_INFINITY;
  /** Prefill tokens per ms in the current interval. */
  private prefillRate = 0;
  private pending: EngineEvent[] = [];

  private prefixQueryTokens = 0;
  private prefixHitTokens = 0;
  private promptTokensTotal = 0;
  private generationTokensTotal = 0;
  private requestsFinished = 0;
  private prefillSeconds = 0;

  constructor(config: EngineConfig) {
    validateConfig(config);
    this.config = config;
    this.bt = config.blockTokens;
    this.pool = new BlockPool(Math.floor(config.kvCacheTokens / config.blockTokens));
    this.budget = config.maxBatchedTokens ?? DEFAULT_MAX_BATCHED_TOKENS;
    this.perKTokMs = config.decodeStepPerKTokenMs ?? 0;
    this.prefillPerMs = config.prefillTokensPerSec / 1000;
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
    const r: Req = {
      id,
      blocks: req.blocks,
      promptTokens,
      outputTokens,
      seq: this.seq++,
      totalBlocks: Math.ceil((promptTokens + outputTokens) / this.bt),
      keyed: Math.min(req.blocks.length, Math.floor(promptTokens / this.bt)),
      phase: "waiting",
      slots: null,
      hitBlocks: 0,
      prefillLeft: 0,
      startStep: 0,
      finishStep: 0,
    };
    this.byId.set(id, r);
    this.waiting.push(r);
    this.admit();
    this.replan();
  }

  /** When the next first_token or done happens at current rates (ms); Infinity when idle. */
  nextEventTime(): number {
    if (this.pending.length > 0) return this.t;
    return this.nextEvent().time;
  }

  /** Processes everything up to `now` and returns the events that happened, in time order. */
  advance(now: number): EngineEvent[] {
    this.advanceTo(now);
    const out = this.pending;
    this.pending = [];
    return out;
  }

  /**
   * Output tokens produced so far by a running request (0 while waiting or
   * prefilling, and for ids the engine no longer holds). Call advance(now)
   * first: this projects the current interval only.
   */
  tokensGenerated(id: string, now: number): number {
    const r = this.byId.get(id);
    if (r === undefined || r.phase !== "decode") return 0;
    const extra = now > this.t && Number.isFinite(this.stepMs) ? (now - this.t) / this.stepMs : 0;
    return Math.min(r.outputTokens, 1 + Math.floor(this.step + extra - r.startStep + EPS_STEPS));
  }

  /** The client went away: drop the request and free its blocks (no event is emitted for it). */
  abort(id: string, now: number): void {
    this.advanceTo(now);
    const r = this.byId.get(id);
    if (r === undefined) return;
    this.byId.delete(id);
    if (r.phase === "waiting") {
      this.waiting.splice(this.waiting.indexOf(r, this.waitHead), 1);
    } else if (r.phase === "prefill") {
      this.prefilling.splice(this.prefilling.indexOf(r, this.pfHead), 1);
      this.pool.release(r.slots!, r.totalBlocks);
    } else {
      this.generationTokensTotal += Math.min(r.outputTokens, 1 + Math.floor(this.step - r.startStep));
      this.decoding.remove(r);
      this.leaveDecode(r);
      this.pool.release(r.slots!, r.totalBlocks);
    }
    this.admit();
    this.replan();
  }

  /** Exact longest run of leading blocks cached right now (read-only: no LRU touch). */
  cachedPrefixBlocks(blocks: readonly number[]): number {
    return this.pool.longestPrefix(blocks);
  }

  metrics(now: number): EngineMetrics {
    this.advanceTo(now);
    const pool = this.pool;
    return {
      running: this.prefilling.length - this.pfHead + this.nDec,
      waiting: this.waiting.length - this.waitHead,
      kvUsage: 1 - pool.numFree / pool.numBlocks,
      prefixQueryTokens: this.prefixQueryTokens,
      prefixHitTokens: this.prefixHitTokens,
      promptTokensTotal: this.promptTokensTotal,
      generationTokensTotal: this.generationTokensTotal,
      requestsFinished: this.requestsFinished,
      prefillSeconds: this.prefillSeconds,
    };
  }

  // ---- internals -------------------------------------------------------

  private advanceTo(now: number): void {
    if (!(now >= this.t)) {
      if (Number.isNaN(now)) throw new RangeError("now is NaN");
      return; // time never runs backwards here: an earlier `now` is treated as the current time
    }
    for (;;) {
      const ev = this.nextEvent();
      if (ev.time > now) break;
      this.handle(ev.time, ev.kind);
    }
    this.progress(now);
  }

  private nextEvent(): { time: number; kind: number } {
    let time = Number.POSITIVE_INFINITY;
    let kind = NO_EVENT;
    if (this.prefillRate > 0 && this.pfHead < this.prefilling.length) {
      time = this.t + this.prefilling[this.pfHead]!.prefillLeft / this.prefillRate;
      kind = PREFILL_DONE;
    }
    const top = this.decoding.peek();
    if (top !== undefined) {
      const td = this.t + Math.max(0, top.finishStep - this.step) * this.stepMs;
      if (td < time) {
        time = td;
        kind = DECODE_DONE;
      }
    }
    return { time, kind };
  }

  /** Moves the clock to `to` at the current (constant) rates. */
  private progress(to: number): void {
    const dt = to - this.t;
    if (dt <= 0) return;
    if (Number.isFinite(this.stepMs)) {
      if (this.nDec > 0) this.step += dt / this.stepMs;
      if (this.prefillRate > 0) {
        let work = this.prefillRate * dt;
        this.prefillSeconds += work / this.prefillPerMs / 1000;
        for (let i = this.pfHead; i < this.prefilling.length && work > 0; i++) {
          const r = this.prefilling[i]!;
          const d = Math.min(work, r.prefillLeft);
          r.prefillLeft -= d;
          work -= d;
        }
      }
    }
    this.t = to;
  }

  private handle(time: number, kind: number): void {
    this.progress(time);
    // Snap the event that was due, so float residue cannot postpone it.
    if (kind === PREFILL_DONE) this.prefilling[this.pfHead]!.prefillLeft = 0;
    else if (kind === DECODE_DONE) this.step = Math.max(this.step, this.decoding.peek()!.finishStep);
    while (this.pfHead < this.prefilling.length && this.prefilling[this.pfHead]!.prefillLeft <= EPS_TOKENS)
      this.completePrefill(this.prefilling[this.pfHead++]!);
    if (this.pfHead > 64 && this.pfHead * 2 > this.prefilling.length) {
      this.prefilling = this.prefilling.slice(this.pfHead);
      this.pfHead = 0;
    }
    for (let top = this.decoding.peek(); top !== undefined; top = this.decoding.peek()) {
      if (top.finishStep > this.step + EPS_STEPS) break;
      this.decoding.pop();
      this.finish(top);
    }
    this.admit();
    this.replan();
  }

  private completePrefill(r: Req): void {
    const slots = r.slots!;
    for (let i = r.hitBlocks; i < r.keyed; i++) this.pool.register(slots[i]!, r.blocks[i]!);
    this.promptTokensTotal += r.promptTokens;
    this.pending.push({ kind: "first_token", id: r.id, time: this.t, cachedTokens: r.hitBlocks * this.bt });
    r.phase = "decode";
    r.startStep = this.step;
    r.finishStep = this.step + r.outputTokens - 1;
    this.nDec++;
    this.decPromptSum += r.promptTokens;
    this.decStartSum += r.startStep;
    this.decoding.push(r);
  }

  private finish(r: Req): void {
    this.leaveDecode(r);
    this.pool.release(r.slots!, r.totalBlocks);
    this.byId.delete(r.id);
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

  private leaveDecode(r: Req): void {
    this.nDec--;
    this.decPromptSum -= r.promptTokens;
    this.decStartSum -= r.startStep;
    if (this.nDec === 0) {
      // Reset the sums so float residue cannot accumulate across busy periods.
      this.decPromptSum = 0;
      this.decStartSum = 0;
    }
  }

  /** FCFS admission: the head of the queue goes in while a run slot and its KV blocks are available. */
  private admit(): void {
    const pool = this.pool;
    const bt = this.bt;
    const maxRunning = this.config.maxRunning;
    while (this.waitHead < this.waiting.length) {
      if (this.prefilling.length - this.pfHead + this.nDec >= maxRunning) break;
      const r = this.waiting[this.waitHead]!;
      const maxHit = Math.min(r.keyed, Math.floor((r.promptTokens - 1) / bt));
      // A blocked head is retried at every event: reuse its slot array, and
      // skip the lookup when even a full hit could not make it fit.
      if (r.totalBlocks - maxHit > pool.numFree) break;
      const slots = r.slots ?? new Int32Array(r.totalBlocks);
      r.slots = slots;
      const hit = pool.match(r.blocks, maxHit, slots);
      const need = r.totalBlocks - hit;
      if (need > pool.numFree - pool.lastMatchFree) break;
      this.waitHead++;
      pool.pinSlots(slots, hit);
      pool.allocate(need, slots, hit);
      r.hitBlocks = hit;
      r.prefillLeft = r.promptTokens - hit * bt;
      r.phase = "prefill";
      this.prefixQueryTokens += r.promptTokens;
      this.prefixHitTokens += hit * bt;
      this.prefilling.push(r);
    }
    if (this.waitHead > 64 && this.waitHead * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.waitHead);
      this.waitHead = 0;
    }
  }

  /** Recomputes the step time and prefill rate after the batch changed. */
  private replan(): void {
    let pendingPrefill = 0;
    for (let i = this.pfHead; i < this.prefilling.length; i++)
      pendingPrefill += this.prefilling[i]!.prefillLeft;
    const nDec = this.nDec;
    const chunk = Math.min(Math.max(0, this.budget - nDec), pendingPrefill);
    if (nDec === 0 && chunk <= 0) {
      this.stepMs = Number.POSITIVE_INFINITY;
      this.prefillRate = 0;
      return;
    }
    const c = this.config;
    // Context held by decoding sequences: prompt + tokens generated so far (1 + steps since start).
    const context = nDec > 0 ? this.decPromptSum + nDec * (1 + this.step) - this.decStartSum : 0;
    this.stepMs =
      c.decodeStepBaseMs +
      c.decodeStepPerSeqMs * nDec +
      (this.perKTokMs * context) / 1000 +
      chunk / this.prefillPerMs;
    this.prefillRate = chunk / this.stepMs;
  }
}

function validateConfig(c: EngineConfig): void {
  const positiveInt = (name: string, v: number | undefined): void => {
    if (v !== undefined && (!Number.isInteger(v) || v < 1))
      throw new RangeError(`EngineConfig.${name} must be a positive integer, got ${v}`);
  };
  const nonNegative = (name: string, v: number | undefined): void => {
    if (v !== undefined && !(Number.isFinite(v) && v >= 0))
      throw new RangeError(`EngineConfig.${name} must be a finite number ≥ 0, got ${v}`);
  };
  positiveInt("blockTokens", c.blockTokens);
  positiveInt("maxRunning", c.maxRunning);
  positiveInt("maxBatchedTokens", c.maxBatchedTokens);
  if (!Number.isFinite(c.kvCacheTokens) || c.kvCacheTokens < c.blockTokens)
    throw new RangeError(`EngineConfig.kvCacheTokens must hold at least one block, got ${c.kvCacheTokens}`);
  if (!(Number.isFinite(c.prefillTokensPerSec) && c.prefillTokensPerSec > 0))
    throw new RangeError(`EngineConfig.prefillTokensPerSec must be > 0, got ${c.prefillTokensPerSec}`);
  nonNegative("decodeStepBaseMs", c.decodeStepBaseMs);
  nonNegative("decodeStepPerSeqMs", c.decodeStepPerSeqMs);
  nonNegative("decodeStepPerKTokenMs", c.decodeStepPerKTokenMs);
  if (c.decodeStepBaseMs + c.decodeStepPerSeqMs <= 0)
    throw new RangeError(
      "EngineConfig: a decode step must take some time (decodeStepBaseMs + decodeStepPerSeqMs > 0)",
    );
}

export { DEFAULT_ENGINE_CONFIG, ENGINE_PRESETS } from "./presets";
