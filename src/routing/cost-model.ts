/**
 * Expected time to first token on each backend, as prefix_aware scores it:
 *
 *   cost_i = max(queueWait_i, memoryWait_i) + (uncached_i + kvWeight · kv_i) / rate_i
 *            + decodeMsPerInflight · inflight_i
 *
 * - queueWait_i: a virtual prefill queue, the gateway's view of NVIDIA
 *   Dynamo's "active prefill tokens" (ai-dynamo/dynamo kv_router/sequence.rs)
 *   built from our own leases instead of engine events. Routing a request
 *   pushes the backend's busy-until time by its uncached tokens / rate; it
 *   drains with `now`, and a completed request gives back what is left of
 *   its slot (its prefill is over: a short request must not leave its
 *   backend looking busy).
 *   When the gateway hears first tokens (firstToken(): a proxy sees the
 *   stream's first bytes), a prefill of ours whose first token has not come
 *   back is still running, whatever its predicted end says: a caller may ask
 *   (costTerms' `holdUnanswered`) for the queue to last until that predicted
 *   end plus the mean overrun learned from the first tokens heard. It is
 *   learned only from prefills the ledger expected to start at once (no
 *   queue, no memory wait): one that waited for memory came late by a wait
 *   the ledger prices already (bench/results/policy-work.md, "Zipf's
 *   first-token lateness with memory waits left out"). Without a first token
 *   heard it is never applied.
 * - rate_i: prefill tokens per second, one pooled estimate per unit of
 *   weight (weight is relative capacity), starting at
 *   `defaultPrefillTokensPerSec`. It is learned from TTFTs, but queueing the
 *   gateway cannot see (the engine's running set, batch budget, memory)
 *   only ever makes a sample too slow: so a sample from a request that had
 *   the backend to itself moves the estimate both ways, any other one can
 *   only raise it (an upper envelope; see observe()). Samples under
 *   `minSampleTokens` uncached tokens are mostly network and the first
 *   decode step, and are skipped.
 * - kv_i: KV tokens our in-flight requests hold on i (uncached prompt +
 *   expected output). An engine admits a request only when its input's blocks
 *   fit (vLLM V1; its output's blocks come one decode step at a time, so the
 *   memory wait counts an in-flight request's output as decoded so far),
 *   so past capacity a request waits for memory (memoryWait_i). The memory
 *   held is not kv_i: a running request also pins the cached history it
 *   matched (vLLM V1 BlockPool.touch takes a hit block out of the free queue
 *   until no running request holds it), shared blocks once, which the
 *   affinity index counts (FleetView pinnedTokens: its pinned entries, less
 *   the keyed blocks our requests added, already in kv_i); and an answer
 *   takes what the pool's engines report answers to be
 *   (usage.completion_tokens, observeOutput), never more than its max_tokens
 *   hint, which clients overstate or omit. The wait lasts until the
 *   in-flight requests expected to finish first have freed the overflow, each
 *   expected at its predicted prefill end plus the decode time observed on i
 *   (first token → completion). Memory comes back a whole request at a time:
 *   one long prompt can hold most of an engine's KV through a long decode
 *   (bench/results/policy-work.md, "Mooncake's tail with the MoE preset").
 *   The queue drains while memory is freed, so the request starts at the
 *   later of the two waits. Below capacity, a small linear term (kvWeight)
 *   prefers the backend with less decode work in flight — Dynamo's "active
 *   decode blocks", weighted lower than prefill.
 * - decodeMsPerInflight: requests in flight slow every engine step a little
 *   and fill the running set; a small term that decides between backends
 *   with equal matches and equal queues, divided by the backend's relative
 *   weight like the rate. It is a constant, 2 ms, and too high for what it
 *   says: a running request adds 0.1-0.7 ms to a step on the simulator's
 *   dense presets, 0.1-2 ms on the MoE by batch. What it is really worth is
 *   learned beside it (learnedInflightMs: decode time per output token
 *   against the mean number of our requests in flight with each, one
 *   estimate per unit of weight for the pool like the rate;
 *   ./inflight-step-cost.ts) and shown in the stats, but not charged: with
 *   the learned figure in its place a tuning-set run (multi-turn MoE) lost
 *   its balance far more often, the 2 ms standing in for the memory our
 *   ledger does not count (bench/results/policy-work.md, "Learned in-flight
 *   cost").
 *
 * The measurements behind these choices: bench/results/routing-tuning.md.
 */
import { InflightStepCost } from "./inflight-step-cost";
import type { BackendSpec } from "./types";

export interface CostModelOptions {
  /** Prefill rate before any outcome is seen, tokens/s. Default 10,000. */
  readonly defaultPrefillTokensPerSec?: number;
  /** Cost of each request already in flight on a backend, ms (at mean weight). Default 2. */
  readonly decodeMsPerInflight?: number;
  /** Completions (in the pool) before the in-flight cost is learned, and the window of that estimate. Default 64. */
  readonly inflightSamples?: number;
  /** EWMA weight of a new rate sample. Default 0.2. */
  readonly ewmaAlpha?: number;
  /** Uncached tokens below which a TTFT says too little about prefill speed. Default 1024. */
  readonly minSampleTokens?: number;
  /** Weight of the KV tokens our in-flight requests hold on a backend, as tokens of prefill. Default 0.05. */
  readonly kvWeight?: number;
}

export const DEFAULT_PREFILL_TOKENS_PER_SEC = 10_000;
/** The in-flight cost charged, ms per request at mean weight. */
export const DEFAULT_DECODE_MS_PER_INFLIGHT = 2;
export const DEFAULT_INFLIGHT_SAMPLES = 64;

interface BackendCostState {
  busyUntil: number;
  /** KV tokens our in-flight requests hold here: uncached prompt + expected output. */
  kvTokens: number;
  /** Σ over the open slots of input + answerTokens: what the memory wait counts before the pinned history. */
  memTokens: number;
  /** Σ keyedTokens of the open slots: the index entries they added, already in their input. */
  keyedTokens: number;
  /** Σ cachedTokens of the open slots: the history they matched, shared blocks once per holder. */
  cachedTokens: number;
  /** weight / mean weight: a weight-2 backend is assumed to prefill twice as fast until measured. */
  share: number;
  /** Configured KV capacity, tokens. */
  capacity: number;
  /** EWMA of how long our requests stay in flight here (route → complete), ms; 0 until one completes. */
  residenceMs: number;
  /** EWMA of how long our requests decode here (first token → complete), ms; 0 until one completes with a TTFT. */
  decodeMs: number;
  /** Our requests in flight here, by predicted prefill end: what frees the KV, request by request. */
  open: PrefillSlot[];
  /** ∫ (our requests in flight here) dt up to `areaAt`, request·ms: how many a request shared the backend with. */
  inflightArea: number;
  areaAt: number;
}

/** One backend's cost for one request (PrefillCostModel.costTerms), term by term, ms. */
export interface CostTerms {
  /** Prefill queued ahead of the request on the backend (the virtual queue). */
  queueWaitMs: number;
  /** Until its KV blocks fit, by the ledger. */
  memoryWaitMs: number;
  /** A wait the caller knows of whatever the ledger says (an engine reading's memory-blocked head). */
  leastWaitMs: number;
  /** When its prefill starts: the latest of the three waits. */
  startMs: number;
  /** Its uncached tokens at the learned rate. */
  prefillMs: number;
  /** kvWeight × the KV tokens our in-flight requests hold there, at the learned rate. */
  kvMs: number;
  /** decodeMsPerInflight × our requests in flight there, by relative weight. */
  inflightMs: number;
  /** startMs + prefillMs + kvMs + inflightMs: cost(). */
  total: number;
}

/** A request's place in its backend's virtual prefill queue, from routed() to released(). */
export interface PrefillSlot {
  /** When it was routed. */
  readonly at: number;
  /** Predicted queue wait when it was routed, ms. */
  readonly wait: number;
  /** Predicted end of its prefill (virtual time, ms). */
  readonly end: number;
  /** Predicted prefill duration, ms. */
  readonly service: number;
  /** Nothing else of ours was in flight on the backend when it was routed. */
  readonly alone: boolean;
  /**
   * The ledger expected it to start at once: no queue wait and no memory wait for its input when it was
   * routed. Only such a prefill's first token teaches the overrun (firstToken()).
   */
  readonly atOnce: boolean;
  /** Its first token has come back (firstToken()): its prefill is over. */
  firstToken?: boolean;
  /** KV tokens it holds by the time it completes: its input (uncached prompt, and cached past the window) + expected output. */
  readonly kvTokens: number;
  /** The expected output part of kvTokens: blocks the engine gives it one decode step at a time, not at admission. */
  readonly outputTokens: number;
  /** The KV its answer is expected to take by its end, as the memory wait counts it (expectedAnswer). */
  readonly answerTokens: number;
  /** Keyed prompt tokens it added to the affinity index (its uncached blocks in the key window). */
  readonly keyedTokens: number;
  /** Keyed prompt tokens it matched there: the cached history it pins while it runs. */
  readonly cachedTokens: number;
  /** The backend's in-flight area (request·ms) when it was sent: with the area at its end, the mean number of our requests it ran with. */
  readonly area: number;
}

export class PrefillCostModel {
  readonly defaultRate: number;
  readonly decodeMsPerInflight: number;
  private readonly alpha: number;
  private readonly minSampleTokens: number;
  readonly kvWeight: number;
  /**
   * Prefill rate per unit of share (tokens/ms): one estimate for the pool, scaled by each backend's
   * weight. Per-backend estimates starve: one slow first sample (a cold connection) makes a backend look
   * slow, and cost-based placement then sends it none of the cold prompts that would prove otherwise.
   * Replicas of a pool differ by weight.
   */
  private ratePerShare: number;
  /**
   * EWMA of (first token heard − predicted prefill end), ms, one for the pool, from prefills expected to start
   * at once; undefined until one is heard.
   */
  private overrunMs: number | undefined = undefined;
  /** EWMA of the answers' length the engines reported (usage.completion_tokens); 0 until one is seen. */
  private answerPerRequest = 0;
  /**
   * What one more request in flight adds to an engine step, per unit of share (a weight-2 backend's steps
   * are taken as twice as fast): one estimate for the pool like the rate, so every backend has a figure
   * from the same moment (~8 completions each on 8 backends).
   */
  private readonly stepCost: InflightStepCost;
  private byId = new Map<string, BackendCostState>();
  private states: BackendCostState[] = [];
  /** costTerms' answer, reused (a decision asks once per backend). */
  private readonly terms: CostTerms = {
    queueWaitMs: 0,
    memoryWaitMs: 0,
    leastWaitMs: 0,
    startMs: 0,
    prefillMs: 0,
    kvMs: 0,
    inflightMs: 0,
    total: 0,
  };

  constructor(options: CostModelOptions = {}) {
    const tps = options.defaultPrefillTokensPerSec ?? DEFAULT_PREFILL_TOKENS_PER_SEC;
    if (!(tps > 0) || !Number.isFinite(tps))
      throw new RangeError(`defaultPrefillTokensPerSec must be a finite number > 0, got ${tps}`);
    this.defaultRate = tps / 1000;
    this.ratePerShare = this.defaultRate;
    this.decodeMsPerInflight = options.decodeMsPerInflight ?? DEFAULT_DECODE_MS_PER_INFLIGHT;
    if (!(this.decodeMsPerInflight >= 0) || !Number.isFinite(this.decodeMsPerInflight))
      throw new RangeError(
        `decodeMsPerInflight must be a finite number >= 0, got ${this.decodeMsPerInflight}`,
      );
    this.stepCost = new InflightStepCost(options.inflightSamples ?? DEFAULT_INFLIGHT_SAMPLES);
    this.alpha = options.ewmaAlpha ?? 0.2;
    this.minSampleTokens = options.minSampleTokens ?? 1024;
    this.kvWeight = options.kvWeight ?? 0.05;
  }

  /** Keeps learned state for backends that stay (matched by id). */
  setBackends(backends: readonly BackendSpec[]): void {
    const byId = new Map<string, BackendCostState>();
    const meanWeight = backends.reduce((a, b) => a + b.weight, 0) / Math.max(1, backends.length);
    this.states = backends.map((b) => {
      const share = b.weight / meanWeight;
      const s = this.byId.get(b.id) ?? {
        busyUntil: 0,
        kvTokens: 0,
        memTokens: 0,
        keyedTokens: 0,
        cachedTokens: 0,
        share,
        capacity: b.kvCacheTokens,
        residenceMs: 0,
        decodeMs: 0,
        open: [],
        inflightArea: 0,
        areaAt: 0,
      };
      s.share = share;
      s.capacity = b.kvCacheTokens;
      byId.set(b.id, s);
      return s;
    });
    this.byId = byId;
  }

  get size(): number {
    return this.states.length;
  }

  queueWaitMs(i: number, now: number): number {
    return Math.max(0, this.states[i]!.busyUntil - now);
  }

  /**
   * queueWaitMs, and a prefill of ours on i whose first token has not come back still running: until its
   * predicted end plus the learned overrun (never sooner than the ledger says; the ledger's alone until a
   * first token is heard).
   */
  unansweredQueueWaitMs(i: number, now: number): number {
    const s = this.states[i]!;
    let end = s.busyUntil;
    const over = this.overrunMs;
    if (over !== undefined)
      for (const slot of s.open) if (slot.firstToken !== true) end = Math.max(end, slot.end + over);
    return Math.max(0, end - now);
  }

  /**
   * The first token of a request of ours on backend i came back at `now`: its prefill is over. Learns how far
   * past its predicted end it came (the pool's overrun, an EWMA with the rate's α), from a prefill expected
   * to start at once only. Once per slot.
   */
  firstToken(i: number, slot: PrefillSlot, now: number): void {
    if (this.states[i] === undefined || slot.firstToken === true) return;
    slot.firstToken = true;
    if (!slot.atOnce) return;
    const sample = now - slot.end;
    this.overrunMs =
      this.overrunMs === undefined ? sample : this.overrunMs + this.alpha * (sample - this.overrunMs);
  }

  /** The pool's learned overrun of predicted prefill ends, ms; undefined until a first token is heard. */
  prefillEndOverrunMs(): number | undefined {
    return this.overrunMs;
  }

  /** KV tokens our in-flight requests hold on backend i (uncached prompt + expected output): its work in flight. */
  heldTokens(i: number): number {
    return this.states[i]!.kvTokens;
  }

  /** How long our requests decode on backend i (first token → completion), ms, as learned; 0 until seen. */
  decodeMs(i: number): number {
    return this.states[i]!.decodeMs;
  }

  /**
   * What one more of our requests in flight adds to an engine step on backend i, ms, as learned from
   * completions (scaled by its relative weight); undefined until enough are seen. Shown, not charged
   * (see the header).
   */
  learnedInflightMs(i: number): number | undefined {
    const pooled = this.stepCost.msPerRequest();
    return pooled === undefined ? undefined : pooled / this.states[i]!.share;
  }

  /** Our requests in flight on backend i, by predicted prefill end (read only). */
  openSlots(i: number): readonly PrefillSlot[] {
    return this.states[i]!.open;
  }

  /** Whether a request of ours completed on backend i yet: before, nothing is learned to ask expectedEndMs about. */
  hasExpectedEnds(i: number): boolean {
    return this.states[i]!.residenceMs !== 0;
  }

  /**
   * When a request of ours in flight on backend i is expected to complete and free its KV, ms from now:
   * memoryWaitMs's rule (endFromNow). Ask only once hasExpectedEnds(i): before, nothing is learned.
   */
  expectedEndMs(i: number, slot: PrefillSlot, now: number): number {
    const s = this.states[i]!;
    return endFromNow(slot.end, this.expectedDecodeMs(s), now);
  }

  /**
   * How long a request of ours in flight on s is expected to decode after its predicted prefill end, ms:
   * as learned (first token → completion), or its whole stay before any TTFT was seen.
   */
  private expectedDecodeMs(s: BackendCostState): number {
    return s.decodeMs > 0 ? s.decodeMs : s.residenceMs;
  }

  /** Prefill rate of backend i, tokens/s. */
  prefillTokensPerSec(i: number): number {
    return this.rateOf(this.states[i]!) * 1000;
  }

  /** Time backend i takes to prefill `tokens` tokens, ms. */
  prefillMs(i: number, tokens: number): number {
    return tokens / this.rateOf(this.states[i]!);
  }

  /** The expected TTFT of a request on backend i, ms: costTerms(...).total. */
  cost(...args: Parameters<PrefillCostModel["costTerms"]>): number {
    return this.costTerms(...args).total;
  }

  /**
   * cost(), term by term: what an audit compares with the TTFT that followed. The object is reused: read
   * it before the next call.
   * @param leastWaitMs a wait the request has before its prefill starts whatever the ledger says (an
   *   engine reading's memory-blocked queue head: ./engine-memory.ts); its start is the later of the two.
   * @param memoryWaitMs the request's memory wait here, when the caller has already asked
   *   `memoryWaitForMs` for the same tokens (prefix-aware's admission view): not walked twice.
   * @param holdUnanswered the queue wait counts our prefills there not yet answered (unansweredQueueWaitMs).
   */
  costTerms(
    i: number,
    uncachedTokens: number,
    inflight: number,
    now: number,
    outputTokens = 0,
    leastWaitMs = 0,
    memoryWaitMs = this.memoryWaitMs(this.states[i]!, uncachedTokens + outputTokens, now),
    holdUnanswered = false,
  ): Readonly<CostTerms> {
    const s = this.states[i]!;
    const t = this.terms;
    const rate = this.rateOf(s);
    t.queueWaitMs = holdUnanswered ? this.unansweredQueueWaitMs(i, now) : this.queueWaitMs(i, now);
    t.memoryWaitMs = memoryWaitMs;
    t.leastWaitMs = leastWaitMs;
    // The prefill starts behind the prefill queued ahead of it and once its blocks fit: the two overlap in
    // time (the queue drains while memory is freed), so the later of the two, not their sum.
    t.startMs = Math.max(t.queueWaitMs, memoryWaitMs, leastWaitMs);
    t.prefillMs = uncachedTokens / rate;
    t.kvMs = (this.kvWeight * s.kvTokens) / rate;
    t.inflightMs = (this.decodeMsPerInflight * inflight) / s.share;
    // Summed as it always was (one division for prefill and KV), so a decision's ties fall as before.
    t.total = t.startMs + (uncachedTokens + this.kvWeight * s.kvTokens) / rate + t.inflightMs;
    return t;
  }

  /**
   * How long a request needing `needTokens` of KV waits on backend i, ms, until its blocks fit (the
   * memory wait of the header alone, without the queue): ./admission-view.ts holds back a backend where it is positive.
   */
  memoryWaitForMs(i: number, needTokens: number, now: number, pinnedTokens?: number): number {
    return this.memoryWaitMs(this.states[i]!, needTokens, now, pinnedTokens);
  }

  /**
   * The KV a request's answer is expected to take: the mean answer the pool's engines reported, never
   * more than its max_tokens hint (an upper bound); the hint alone until an answer's length is known.
   */
  expectedAnswer(hint: number): number {
    const mean = this.answerPerRequest;
    if (mean === 0) return hint;
    return hint > 0 ? Math.min(hint, mean) : mean;
  }

  /** An answer of `tokens` tokens ended (usage.completion_tokens): its length joins the pool's mean. */
  observeOutput(tokens: number): void {
    if (!(tokens >= 0) || !Number.isFinite(tokens)) return;
    const m = this.answerPerRequest;
    this.answerPerRequest = m === 0 ? Math.max(tokens, Number.MIN_VALUE) : m + this.alpha * (tokens - m);
  }

  /**
   * An engine admits a request only when its KV blocks fit (vLLM's FCFS
   * scheduler stops at the first request it cannot allocate: everything
   * queued behind it waits too), so past the backend's capacity a request
   * waits until enough of the KV held is freed. vLLM V1 asks that the
   * request's whole input fit (scheduler_reserve_full_isl: the caller's
   * `needTokens` is its input, not its output), and its running requests hold
   * their input and the output decoded so far (heldNow), not their whole
   * expected output (vllm/v1/core/sched/scheduler.py Scheduler.schedule,
   * vllm/v1/core/kv_cache_manager.py allocate_slots). KV is freed a whole request
   * at a time, at its completion, and one long prompt can hold most of an
   * engine's memory: so the wait is until the in-flight requests expected to
   * finish first have freed the overflow, each expected one decode time
   * (observed here: first token → completion) after its predicted prefill
   * end, or after now once that end has passed, not a smooth drain of the
   * total. `pinnedTokens` (the index's pinned entries, FleetView pinnedTokens) adds the cached history
   * our requests pin, each block once; each request is taken to free a share of it in proportion to the
   * history it matched (a block another running request shares stays held: optimistic there).
   */
  private memoryWaitMs(s: BackendCostState, needTokens: number, now: number, pinnedTokens?: number): number {
    const open = s.open;
    const history = pinnedTokens === undefined ? 0 : Math.max(0, pinnedTokens - s.keyedTokens);
    // memTokens + history bounds what is held now: below capacity with it, no walk.
    if (s.memTokens + history + needTokens <= s.capacity || s.residenceMs === 0 || open.length === 0)
      return 0;
    const decode = this.expectedDecodeMs(s);
    const perCached = s.cachedTokens > 0 ? history / s.cachedTokens : 0;
    // What our requests hold NOW, as vLLM V1 allocates (KVCacheManager.allocate_slots): their input, the
    // history they pin, and of their answer only what they have decoded so far, not all of it from admission.
    const heldAt = (k: number) => heldNow(open[k]!, decode, now) + open[k]!.cachedTokens * perCached;
    let held = 0;
    for (let k = 0; k < open.length; k++) held += heldAt(k);
    const overflow = held + needTokens - s.capacity;
    if (overflow <= 0) return 0;
    // Each request is expected as endFromNow says: one decode after its predicted prefill end, or, once
    // that has passed, one more decode from now.
    // `open` is sorted by prefill end, so in order of expected end the requests are three runs of it:
    // [a, b) (prefill ended less than a decode ago: ends before now + decode, in order), then the
    // overdue [0, a) (all at now + decode: endFromNow's test, end <= now − decode, is k < a), then
    // [b, n) (in order). The wait ends when the requests expected first have freed the overflow. Walk
    // from the shorter side (what is freed, or what is kept: at most what is held − overflow), so a decision
    // costs about a backend's capacity in requests at most, never its whole ledger.
    const n = open.length;
    const a = searchEnd(open, now - decode, true);
    const b = Math.max(a, searchEnd(open, now, false));
    const endOf = (k: number) => endFromNow(open[k]!.end, decode, now);
    const order = (j: number) => (j < b - a ? a + j : j < b ? j - (b - a) : j);
    // Each frees what it holds now: the others' growth meanwhile is not counted (a running request that
    // cannot grow preempts in vLLM V1; it does not hold the waiting one back).
    if (overflow <= held / 2)
      return endWhenFreed(
        n,
        overflow,
        (j) => heldAt(order(j)),
        (j) => endOf(order(j)),
      );
    // Freeing the first j requests in that order leaves `kept`; the last one freed is where kept
    // first fits in held − overflow.
    let kept = 0;
    for (let j = n - 1; j > 0; j--) {
      const k = order(j);
      kept += heldAt(k);
      if (kept > held - overflow) return endOf(k);
    }
    return endOf(order(0));
  }

  /**
   * A request was sent to i: its prefill joins the queue. Its KV in the ledger is its uncached prompt +
   * `pastTokens` (its prompt cached past the key window, which it holds but does not prefill) +
   * `outputTokens` (its expected output, held as it decodes).
   */
  routed(
    i: number,
    uncachedTokens: number,
    outputTokens: number,
    inflightBefore: number,
    now: number,
    pastTokens = 0,
    keyedTokens = 0,
    cachedTokens = 0,
  ): PrefillSlot {
    const s = this.states[i]!;
    advanceArea(s, now);
    const kvTokens = uncachedTokens + pastTokens + outputTokens;
    // A wait for memory is not added to the queue: the requests behind this one already see it, as their
    // own memory wait counts this request's KV (and it shrinks as soon as a holder completes early).
    const wait = Math.max(0, s.busyUntil - now);
    // Asked before its own KV joins the ledger, for its input as vLLM V1 admits it.
    const atOnce = wait === 0 && this.memoryWaitMs(s, uncachedTokens + pastTokens, now) === 0;
    const service = uncachedTokens / this.rateOf(s);
    s.busyUntil = now + wait + service;
    s.kvTokens += kvTokens;
    const answerTokens = this.expectedAnswer(outputTokens);
    s.memTokens += kvTokens - outputTokens + answerTokens;
    s.keyedTokens += keyedTokens;
    s.cachedTokens += cachedTokens;
    const slot: PrefillSlot = {
      at: now,
      wait,
      end: s.busyUntil,
      service,
      alone: inflightBefore === 0 && wait === 0,
      atOnce,
      kvTokens,
      outputTokens,
      answerTokens,
      keyedTokens,
      cachedTokens,
      area: s.inflightArea,
    };
    insertByEnd(s.open, slot);
    return slot;
  }

  /**
   * The request ended (any outcome): its prefill is no longer ahead of anyone.
   * Gives back the part of its slot still in the future; the slots queued
   * behind it move up by as much. With its TTFT (a success), its decode time
   * is learned; with its output tokens too, what the requests in flight
   * with it cost each step.
   */
  released(i: number, slot: PrefillSlot, now: number, ttftMs?: number, outputTokens?: number): void {
    const s = this.states[i];
    if (s === undefined) return;
    advanceArea(s, now);
    removeByEnd(s.open, slot);
    const start = slot.end - slot.service;
    const left = Math.max(0, slot.end - Math.max(now, start));
    s.busyUntil = Math.max(now, s.busyUntil - left);
    s.kvTokens = Math.max(0, s.kvTokens - slot.kvTokens);
    s.memTokens = Math.max(0, s.memTokens - (slot.kvTokens - slot.outputTokens + slot.answerTokens));
    s.keyedTokens = Math.max(0, s.keyedTokens - slot.keyedTokens);
    s.cachedTokens = Math.max(0, s.cachedTokens - slot.cachedTokens);
    const stay = now - slot.at;
    s.residenceMs = s.residenceMs === 0 ? stay : s.residenceMs + this.alpha * (stay - s.residenceMs);
    if (ttftMs !== undefined && ttftMs >= 0 && ttftMs <= stay) {
      const decode = stay - ttftMs;
      s.decodeMs = s.decodeMs === 0 ? decode : s.decodeMs + this.alpha * (decode - s.decodeMs);
      // Our requests in flight with it, on average over its stay (itself included): the batch it decoded
      // in is better told by that than by the count when it was sent, which a long decode outlives.
      if (outputTokens !== undefined && stay > 0)
        this.stepCost.observe((s.inflightArea - slot.area) / stay, decode * s.share, outputTokens);
    }
  }

  /**
   * Learns i's prefill rate from one observed TTFT. uncached / TTFT is a lower
   * bound of the rate whatever happened ahead of the request (TTFT ≥ its own
   * prefill), so it may always raise the estimate; it may lower it only when
   * the request had the backend to itself, where the bound is tight. (TTFT
   * minus our *predicted* wait is no better: an overestimated wait makes the
   * sample look fast.)
   */
  observe(i: number, slot: PrefillSlot, uncachedTokens: number, ttftMs: number): void {
    if (uncachedTokens < this.minSampleTokens || !(ttftMs > 0)) return;
    const s = this.states[i];
    if (s === undefined) return;
    const sample = Math.min(uncachedTokens / ttftMs / s.share, this.defaultRate * 100);
    if (slot.alone || sample > this.ratePerShare)
      this.ratePerShare += this.alpha * (sample - this.ratePerShare);
  }

  private rateOf(s: BackendCostState): number {
    return this.ratePerShare * s.share;
  }
}

/**
 * When a request of ours whose prefill is predicted to end at `end` is expected to complete, ms from now:
 * one decode after that end; once that has passed it is still decoding, expected one more decode from
 * now (memoryless), never "about to free".
 */
function endFromNow(end: number, decode: number, now: number): number {
  return end <= now - decode ? decode : end + decode - now;
}

/**
 * The KV tokens a request of ours holds at `now`, as vLLM V1 allocates: its input from admission, and its
 * answer as decoded so far, at the pace of the decode learned on its backend (its expected answer over one
 * decode time after its predicted prefill end; all of it once that has passed). Its cached history is the
 * caller's (memoryWaitMs).
 */
function heldNow(slot: PrefillSlot, decode: number, now: number): number {
  const decoded = decode > 0 ? Math.min(1, Math.max(0, (now - slot.end) / decode)) : 1;
  return slot.kvTokens - slot.outputTokens + slot.answerTokens * decoded;
}

/**
 * Holders of KV freed one at a time in order of expected end, the j-th (of `count` > 0) freeing kvAt(j)
 * at endAt(j): the end at which what they freed first covers `overflow`, or the last one's end when
 * all of it does not (what the ledger counts falls short of what is pinned).
 */
export function endWhenFreed(
  count: number,
  overflow: number,
  kvAt: (j: number) => number,
  endAt: (j: number) => number,
): number {
  let freed = 0;
  for (let j = 0; j < count; j++) {
    freed += kvAt(j);
    if (freed >= overflow) return endAt(j);
  }
  return endAt(count - 1);
}

/** Brings the backend's in-flight area to `now`: `open` holds our requests in flight there. */
function advanceArea(s: BackendCostState, now: number): void {
  if (now > s.areaAt) {
    s.inflightArea += s.open.length * (now - s.areaAt);
    s.areaAt = now;
  }
}

/** First index of `open` (sorted by end) whose end is ≥ `end` (or > with `after`). */
function searchEnd(open: readonly PrefillSlot[], end: number, after: boolean): number {
  let lo = 0;
  let hi = open.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const e = open[mid]!.end;
    if (e < end || (after && e === end)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Keeps `open` sorted by predicted prefill end; slots mostly arrive last (the queue grows forward). */
function insertByEnd(open: PrefillSlot[], slot: PrefillSlot): void {
  const n = open.length;
  if (n === 0 || open[n - 1]!.end <= slot.end) open.push(slot);
  else open.splice(searchEnd(open, slot.end, true), 0, slot);
}

function removeByEnd(open: PrefillSlot[], slot: PrefillSlot): void {
  for (let k = searchEnd(open, slot.end, false); k < open.length && open[k]!.end === slot.end; k++) {
    if (open[k] === slot) {
      open.splice(k, 1);
      return;
    }
  }
}
