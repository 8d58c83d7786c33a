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
 *
 * Headroom: the ledger's KV belief is within about ±10% of the engine's near
 * capacity (p10–p90 ledger/engine 0.90–1.10: bench/results/ledger-kv/
 * README.md), so "fits now" with a few thousand tokens to spare is not
 * known to fit; on Mooncake MoE 8 most short prompts in the tail went to an
 * engine the ledger said had room and the engine had not (bench/results/
 * kv-packing/README.md). A candidate therefore counts as one that may wait
 * for memory when it would wait if the request needed `headroom` × the
 * backend's capacity more (the caller asks the memory wait with that margin
 * added); as before, it is held back only when another candidate fits with
 * the margin, so no request is refused.
 */

/**
 * The margin of the headroom rule, a share of each backend's KV capacity: about the ledger's error near
 * capacity (see the header). 0.025, chosen on the tuning set among 0.025 / 0.05 / 0.1: 0.05 and 0.1 make
 * multi-turn MoE worse (bench/results/headroom/README.md).
 */
export const DEFAULT_KV_HEADROOM = 0.025;

/** Throws unless `headroom` is a share of capacity in [0, 1). */
export function checkHeadroom(headroom: number): number {
  if (!(headroom >= 0 && headroom < 1))
    throw new RangeError(`kvHeadroom: must be in [0, 1), got ${headroom}`);
  return headroom;
}

/**
 * Holds back (sets to +Infinity in `costs`) every candidate whose memory wait is positive, when some
 * candidate has none. A candidate is a backend whose cost is finite; `memoryWaits[i]` is the request's
 * wait for KV memory on backend i, ms, asked with the headroom margin added to its need (read only for
 * candidates). Returns how many were held back.
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
