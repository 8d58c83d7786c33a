/**
 * The admission view: what placing a request that must wait for KV memory
 * costs the requests that come after it on that engine.
 *
 * vLLM V1's scheduler (vllm-project/vllm, vllm/v1/core/sched/scheduler.py,
 * Scheduler.schedule) admits its waiting queue first come first served and
 * stops at the first request whose blocks KVCacheManager.allocate_slots
 * cannot find. A prompt that nearly fills an engine's KV therefore holds the
 * engine's whole queue while it waits for memory: every request that reaches
 * that engine during the wait waits too, however short. Pricing only the
 * request's own time to first token (cost-model.ts) ignores that; the
 * audits put Mooncake MoE's tail on exactly those short requests
 * (bench/results/policy-work.md: "Tail gaps", "Engine memory").
 *
 * Charge, for backend i: W_i = the part of the request's memory wait on i
 * past its queue wait (during the queue wait later arrivals queue behind the
 * queue anyway; only the memory wait past it blocks work that could run),
 * λ_i = the pool's arrival rate of our requests × w_i/Σw_healthy (the share
 * a backend of that weight receives), and later arrivals are spread
 * uniformly over W_i, each held W_i/2 on average:
 *
 *   headOfLine_i = λ_i · W_i² / 2   (ms of waiting imposed, summed)
 *
 * added to the request's own cost, so a prompt that would wait for memory is
 * placed where its wait blocks the least work: on an engine where it fits,
 * or where it waits least. λ is learned from the times our own requests are
 * routed (the last `samples` of them), a figure every gateway has; nothing
 * here reads engine state. Pure: time is a parameter.
 */

/** Route times kept to learn the arrival rate: the rate is (count − 1) / their span. */
export const DEFAULT_ARRIVAL_SAMPLES = 64;

/** The pool's arrival rate of our requests, from their last route times. */
export class ArrivalRate {
  private readonly times: Float64Array;
  private count = 0;
  private next = 0;

  constructor(readonly samples: number = DEFAULT_ARRIVAL_SAMPLES) {
    if (!Number.isInteger(samples) || samples < 2)
      throw new RangeError(`samples: must be an integer >= 2, got ${samples}`);
    this.times = new Float64Array(samples);
  }

  /** A request was routed at `now` (ms). */
  note(now: number): void {
    this.times[this.next] = now;
    this.next = (this.next + 1) % this.samples;
    if (this.count < this.samples) this.count++;
  }

  /** Requests per ms over the kept route times; 0 until two were seen over a positive span. */
  perMs(): number {
    if (this.count < 2) return 0;
    const newest = this.times[(this.next + this.samples - 1) % this.samples]!;
    const oldest = this.times[this.count < this.samples ? 0 : this.next]!;
    const span = newest - oldest;
    return span > 0 ? (this.count - 1) / span : 0;
  }
}

/**
 * The waiting a placement imposes on later arrivals (see the header), ms summed over them.
 * @param memoryWaitMs the request's own wait for KV memory on the backend, ms
 * @param queueWaitMs the prefill queued ahead of it there, ms
 * @param arrivalsPerMs the rate of arrivals that backend receives, requests per ms
 */
export function headOfLineMs(memoryWaitMs: number, queueWaitMs: number, arrivalsPerMs: number): number {
  const blocked = memoryWaitMs - Math.max(0, queueWaitMs);
  if (!(blocked > 0) || !(arrivalsPerMs > 0)) return 0;
  return (arrivalsPerMs * blocked * blocked) / 2;
}
