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
 * What joining costs, at the margin (not the earliest joiner's whole wait, which no later request can
 * shorten since that prefill is under way: a test on it fired at the Mooncake trace's shared openings,
 * joined by one or two; bench/results/joiner-delay/README.md):
 *   (a) this request's own first token at the home: the home's wait (which already holds the suffixes of
 *       the joiners routed before it, the cost model's queue) and then its own suffix; and
 *   (b) the delay its suffix adds to the step that every joiner already waiting there shares: about
 *       k × prefill(its suffix at the home), k = our requests that joined the pending prefill there
 *       (./pending-prefill.ts counts them).
 * A copy costs this request's first token on the best other backend, a full prefill, and delays nobody
 * already waiting. So, while fewer than MAX_HOMES_COMPUTING backends compute the prefix and no other
 * prefix is being computed from scratch, or the idle backends cover those that are (the guard below), the
 * request starts a copy when (a) + (b) is more than that: in a 16-request burst k grows to ~15 and (b) to
 * ~100 ms (the audit's shared step), while at a shared opening joined by one other request (b) is one suffix.
 * Both sides come from the cost model (queue or memory wait, then prefill at the learned rate); the rule adds
 * no constant. It then goes where its cost is lowest among the others, a second home; the joiners after it
 * share the two homes by cost, each counted against its own home's joiners.
 * Only where a joiner waits (k ≥ 1): with nobody joined to the home's pending prefill there is no shared step
 * to relieve, (b) is zero, and a copy buys at most this request's own first token against a whole prefill
 * repeated elsewhere with its repeat charge dropped. k is joinersOf() of ./pending-prefill.ts: our requests
 * routed to the home, while it still computed the prefix, to reuse the same last matched block of it; the
 * request whose prefill computes the block is not one of them, and the count restarts with each new
 * computation of the block (another predicted end). Without this condition the split fired on the Mooncake
 * trace only at k = 0, at shared openings whose home was queued (bench/results/joiner-delay/README.md,
 * bench/results/joiner-k/README.md).
 * At most one copy: a copy repeats the prefill, and past two homes the repeated prefills crowd out the
 * next burst (a split over four homes cost up to +43% on the audit's seed 2, and a tenth of the hit).
 * The limit is the least split (one copy, as the pending charge is counted once), not a fitted value.
 *
 * The clustering guard: while other prefixes of ours are being computed from scratch in the fleet
 * (./fresh-prefills.ts), a copy only if the backends idle for a prefill (healthy, within their bound, and the
 * cost model's queue and memory waits there zero: a prefill routed there now starts now) number at least those
 * prefixes plus two. A copy is spare capacity spent on one prefix. When bursts cluster, its harm falls on bursts
 * that the gateway routes after it: their first prefills, and their joiners past the shared-prefix cap, go by
 * cost to the backends left idle, and a copy has just taken one of them (bench/results/burst-tail/README.md:
 * with several bursts starting within ~0.2 s, nine first tokens came in a step with another burst's cold
 * prefill, none under llm-d). At the copy's decision those later bursts have not chosen their backends yet, so a
 * test of the backend the copy would take cannot see them, and a charge for the delay the copy puts on prefills
 * already pending there would be zero on an idle backend, which is exactly where the harm happened. What the
 * gateway does see is how many other prefixes are being computed right now (bursts under way, so bursts are
 * clustering) and how many backends would start a prefill at once. Idle means free for a prefill, not empty:
 * under load every backend decodes something, and "nothing of ours in flight" was true at 13 of ~150 blocked
 * decisions per run (a first form, bench/results/idle-guard/README.md). The harm needs the idle backends to run
 * out, so the guard counts what must stay idle after the copy takes one (at worst an idle one): one for each
 * other prefix being computed, which under this same rule may start its one copy (or spill its joiners past the
 * cap) while its prefill is pending, and one for the next new burst's first prefill, which clustering announces.
 * So: idle − 1 ≥ others + 1. The form before this one (no copy while any other prefix was being computed)
 * blocked copies while five of eight backends were idle (bench/results/burst-split-2/README.md, burst 8B seed
 * 1). With no other prefix being computed no burst is under way and nothing is reserved, as before. The guard
 * has no constant: "being computed" is the cost model's predicted prefill end, "a prefix" is the policy's
 * minimum match, "idle" the cost model's own waits.
 */

/** Backends computing one prefix at once, past which a burst joins a home whatever its batch. */
export const MAX_HOMES_COMPUTING = 2;

/**
 * Whether a request should start a copy of the prefix rather than join its home.
 * @param ownHomeMs the request's own first token at the home if it joins, ms from now (the home's wait,
 *   then its suffix)
 * @param suffixMs the prefill of the request's suffix at the home, ms: what it adds to each joiner's step
 * @param joiners k: our requests already joined to the home's pending prefill of the prefix, the request
 *   computing it not counted (./pending-prefill.ts joinersOf); none, no copy
 * @param elsewhereMs the request's first token on the best other backend, ms from now
 * @param homesComputing backends computing the prefix now (the home included)
 * @param othersComputing other prefixes of ours being computed from scratch anywhere (the guard)
 * @param idleBackends healthy backends within their bound where a prefill would start now (no queue or memory wait)
 */
export function startsCopy(
  ownHomeMs: number,
  suffixMs: number,
  joiners: number,
  elsewhereMs: number,
  homesComputing: number,
  othersComputing: number,
  idleBackends: number,
): boolean {
  return (
    joiners >= 1 &&
    (othersComputing === 0 || idleBackends - 1 >= othersComputing + 1) &&
    homesComputing < MAX_HOMES_COMPUTING &&
    ownHomeMs + joiners * suffixMs > elsewhereMs
  );
}
