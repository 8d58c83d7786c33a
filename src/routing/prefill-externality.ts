/**
 * The delay a prefill imposes on the other requests of its engine, ms summed over them: what a placement
 * costs others, beside the request's own time to first token (./cost-model.ts prices only that).
 *
 * Under vLLM V1's scheduler a step carries every running request's next token and as much waiting prefill
 * as the token budget allows (chunked prefill; vllm/v1/core/sched/scheduler.py, `Scheduler.schedule`), so
 * a prefill of d ms lengthens the step it runs in by about d for everyone in it. Two kinds of request pay:
 * - those still waiting for their first token on that engine when it is placed (`sharing`): they are
 *   scheduled in the same step or behind it, and each waits about d longer;
 * - those that arrive while it runs: at a rate λ, about λ·d of them, each waiting on average half of it
 *   (the rest of the step when it came), λ·d²/2 together, the residual-service term of an M/G/1 queue
 *   (Kleinrock, Queueing Systems vol. 1, §5.6; Pollaczek–Khinchine).
 * The running requests' next decode tokens are delayed too, but that is time per output token, not time
 * to first token, and is not counted here.
 *
 * A short suffix (d of a few ms) costs others almost nothing; a full prefill of a long prompt costs in
 * proportion to d² on a busy backend, so between a backend that holds the prefix and one that does not,
 * the second is charged for what its prefill makes the others there wait.
 *
 * Pure: the caller says the prefill time, who is waiting and the arrival rate it expects.
 */
export function prefillExternalityMs(prefillMs: number, sharing: number, arrivalsPerMs: number): number {
  if (!(prefillMs > 0)) return 0;
  return prefillMs * (Math.max(0, sharing) + (Math.max(0, arrivalsPerMs) * prefillMs) / 2);
}
