/**
 * When a burst of a new prefix should start a second copy instead of joining its home.
 *
 * Under vLLM V1 the requests that join a prefix while its home still computes it are all scheduled in
 * the step after that prefill, so they get their first tokens together, at the end of a step that carries
 * every joiner's own suffix: the earliest joiner waits for the whole batch, including joiners that arrive
 * after it was routed (bench/results/policy-work.md, "Burst tails on 8B": with the 8B preset a 16-request
 * burst's early joiners wait ~217 ms for the prefix, then ~103 ms for a step of 15 questions, where a cold
 * prefill on an idle backend takes ~223 ms). prefix_aware charges every other backend the prefill a copy
 * repeats (./pending-prefill.ts), which keeps a burst on one home however large its batch grows.
 *
 * The rule: while fewer than MAX_HOMES_COMPUTING backends compute the prefix, a request does not join the
 * home when the batch's slowest first token there (the earliest joiner's wait, with this request's suffix
 * added) would come later than this request's own first token on the best other backend, a full prefill
 * (both from the cost model: queue or memory wait, then prefill at the learned rate). It then goes where
 * its cost is lowest among the others, a second home; the joiners after it share the two homes by cost.
 * At most one copy: a copy repeats the prefill, and past two homes the repeated prefills crowd out the
 * next burst (a split over four homes cost up to +43% on the audit's seed 2, and a tenth of the hit).
 * The limit is the least split (one copy, as the pending charge is counted once), not a fitted value.
 *
 * The clustering guard: no copy while another prefix of ours is being computed from scratch anywhere in the
 * fleet (./fresh-prefills.ts). A copy is spare capacity spent on one prefix, and it is spare only if no other
 * burst is under way. When bursts cluster, the copy's harm falls on bursts that the gateway routes after it:
 * their first prefills, and their joiners past the shared-prefix cap, go by cost to the backends left idle,
 * and a copy has just taken one of them (bench/results/burst-tail/README.md: with several bursts starting
 * within ~0.2 s, nine first tokens came in a step with another burst's cold prefill, none under llm-d). So
 * the guard is fleet-wide, not per backend: at the copy's decision those later bursts have not chosen their
 * backends yet, so a test of the backend the copy would take cannot see them, and a charge for the delay
 * the copy puts on prefills already pending there would be zero on an idle backend, which is exactly where
 * the harm happened. What the gateway does see is that another prefix is being computed right now: bursts
 * are clustering, and then k bursts keep to about k homes (plus at most the one copy started before the
 * others began) instead of 2k. The guard has no constant: "being computed" is the cost model's predicted
 * prefill end, "a prefix" is the policy's minimum match.
 */

/** Backends computing one prefix at once, past which a burst joins a home whatever its batch. */
export const MAX_HOMES_COMPUTING = 2;

/**
 * Whether a request should start a copy of the prefix rather than join its home.
 * @param homeBatchMs the joining batch's slowest first token at the home if the request joins, ms from now
 *   (the earliest joiner's wait so far plus the home's wait and the request's own prefill there)
 * @param elsewhereMs the request's first token on the best other backend, ms from now
 * @param homesComputing backends computing the prefix now (the home included)
 * @param othersComputing whether another prefix of ours is being computed from scratch anywhere (the guard)
 */
export function startsCopy(
  homeBatchMs: number,
  elsewhereMs: number,
  homesComputing: number,
  othersComputing: boolean,
): boolean {
  return !othersComputing && homesComputing < MAX_HOMES_COMPUTING && homeBatchMs > elsewhereMs;
}
