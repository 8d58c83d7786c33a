/**
 * What a prefill computed from scratch on a backend costs the requests of ours that wait there for a shared
 * step: the mirror of the burst split's (b) term (./burst-split.ts).
 *
 * Under vLLM V1 the requests that joined a prefix while its backend still computes it are all scheduled in the
 * step after that prefill and get their first tokens together, at the end of that step (./pending-prefill.ts
 * counts them). A request sent there meanwhile waits in the same FCFS queue behind them, and the step's token
 * budget takes its prompt into that same step: a cold prompt (a new prefix's first request, or a copy) makes
 * the step carry a whole prefill, and every joiner waiting gets its first token that much later. The cost
 * model sees the request's own wait there (the queue holds the pending prefill and the joiners' suffixes), not
 * the joiners' (bench/results/fresh-seeds/README.md, seed 80 burst 8B: 14 first tokens, the run's slowest 1%,
 * came from steps of 5,632–6,144 prefill tokens that carried another burst's cold prefill, 289–314 ms instead
 * of ~103 ms; the new burst's first request had gone where 7 joiners waited, and so had its copy).
 *
 * So a backend where the request would compute its prompt from scratch (no useful match there) is charged
 * k × its prefill there, k = our requests waiting there for a pending prefill's shared step: the request goes
 * where its own first token plus the delay it adds to the joiners is least, as the burst split weighs a
 * joiner's own first token against the delay its suffix adds to the joiners already waiting (its (b) term).
 * Narrower than a charge for every request in the engine (bench/results/policy-work.md, "gsp's first prefill",
 * failed in two forms): only requests with nothing useful cached there, and only joiners, who by construction
 * share the next step whatever else it prefills. With nobody waiting (k = 0, almost always outside bursts) it
 * is zero. No constant: k from the ledger, the prefill from the cost model's learned rate. The gateway does not
 * know the engine's step budget, so for a prompt longer than it the charge overstates the delay (the budget
 * caps the chunk that step takes); outside bursts k ≥ 1 is rare.
 */

/**
 * The delay, ms, a request computing its prompt from scratch on a backend adds to the requests of ours
 * waiting there for a pending prefill's shared step.
 * @param waitingJoiners k: our requests there joined to a prefill it still computes (PendingPrefill.waitingJoiners)
 * @param prefillMs the request's prefill there (its uncached tokens at the backend's learned rate)
 */
export function joinerDelayMs(waitingJoiners: number, prefillMs: number): number {
  return waitingJoiners * prefillMs;
}
