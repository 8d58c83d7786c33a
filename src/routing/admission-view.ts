/**
 * The admission view: a request that must wait for KV memory on an engine
 * holds that engine's whole queue while it waits, so it is not placed there
 * while another engine can take it now.
 *
 * vLLM V1's scheduler (vllm-project/vllm, vllm/v1/core/sched/scheduler.py,
 * Scheduler.schedule) admits its waiting queue first come first served and
 * stops at the first request whose blocks KVCacheManager.allocate_slots
 * cannot find. A prompt that nearly fills an engine's KV (Mooncake's 65k–125k
 * prompts on a 132k-token MoE engine) therefore blocks every request that
 * reaches that engine during its wait, however short. Pricing only the
 * request's own time to first token (cost-model.ts: the later of its queue
 * and memory waits) lets it pick an engine where it waits for memory because
 * another engine's prefill queue is a little longer; the queue it then
 * blocks is the audits' tail (bench/results/policy-work.md: "Tail gaps",
 * "Engine memory", "Admission view").
 *
 * Rule: among the candidates (within their bounds), when at least one can
 * admit the request now by the ledger (no memory wait), the ones where it
 * would wait for memory are held back; when none can, nothing is held back
 * and the cost decides as before. It reads only the gateway's own ledger
 * (cost-model.ts's memory wait). Tried first and measured worse: a charge of
 * the waiting imposed on later arrivals, λ · W² / 2 (bench/results/
 * admission-view/README.md). Pure.
 */

/**
 * Holds back (sets to +Infinity in `costs`) every candidate whose memory wait is positive, when some
 * candidate has none. A candidate is a backend whose cost is finite; `memoryWaits[i]` is the request's
 * wait for KV memory on backend i, ms (read only for candidates). Returns how many were held back.
 */
export function holdBack(costs: Float64Array, memoryWaits: Float64Array): number {
  let fitsNow = false;
  for (let i = 0; i < costs.length; i++)
    if (costs[i] !== Number.POSITIVE_INFINITY && !(memoryWaits[i]! > 0)) {
      fitsNow = true;
      break;
    }
  if (!fitsNow) return 0;
  let held = 0;
  for (let i = 0; i < costs.length; i++)
    if (costs[i] !== Number.POSITIVE_INFINITY && memoryWaits[i]! > 0) {
      costs[i] = Number.POSITIVE_INFINITY;
      held++;
    }
  return held;
}
