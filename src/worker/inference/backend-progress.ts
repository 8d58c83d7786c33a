/**
 * When this isolate last knew each backend to be answering: the evidence that tells a busy engine from a
 * hung one. A streamed request's first event is its queueing plus its prefill; under a traffic spike a healthy
 * engine's queue makes it 10-60 s late or more, and a fixed first-event deadline then turned answers the engine
 * was about to give into 504s, retries onto an already saturated fleet and ejections of busy backends
 * (bench/results/red-team.md "Overload: a slow fleet"). A backend that is streaming tokens to other requests is
 * alive: its waiting request is queued, not lost. A hung engine sends nothing to anyone, so its requests still
 * time out at UPSTREAM_FIRST_BYTE_TIMEOUT_MS.
 *
 * Only 2xx answers count, when something of them is relayed (a first chunk, an event): response headers prove
 * nothing (vLLM sends them on accepting a request, before its engine has done any work), nor do error answers,
 * nor bytes that complete nothing (a trickle: the idle deadline does not count those either).
 *
 * An isolate sees only the streams it relays: deployed, requests are spread over many isolates, and one whose
 * only request on a busy backend is the waiting one would see nothing. So when this isolate saw nothing for a
 * whole window, the waiting request asks the pool's RouterDO, which hears every isolate's lease ends, when that
 * backend last finished a request with an answer (RouterDO.progress(), router-client.ts askProgress); its
 * answer is kept here too (learnProgress), so the isolate's other waiting requests need not ask again.
 *
 * One entry per configured backend id: bounded by BACKENDS.
 */
const lastProgress = new Map<string, number>();

/** Answer bytes came from `backendId` at `at` (Date.now()). */
export function noteProgress(backendId: string, at: number): void {
  const prev = lastProgress.get(backendId);
  if (prev === undefined || at > prev) lastProgress.set(backendId, at);
}

/** Whether answer bytes came from `backendId` at or after `since` (Date.now() ms). */
export function progressedSince(backendId: string, since: number): boolean {
  return (lastProgress.get(backendId) ?? Number.NEGATIVE_INFINITY) >= since;
}

/**
 * What the RouterDO said (RouterDO.progress()): for each backend, how long before its answer a request there
 * last finished with tokens. `askedAt` (Date.now() when the question was sent, before the answer was made)
 * turns each age into this isolate's clock, never later than the truth: the two clocks need not agree.
 * Only `known` backend ids are kept (the cell's, as BACKENDS names them); an age that is not a finite,
 * non-negative number is ignored.
 */
export function learnProgress(
  entries: readonly { readonly id: string; readonly ageMs: number }[],
  askedAt: number,
  known: ReadonlySet<string>,
): void {
  for (const e of entries)
    if (known.has(e.id) && Number.isFinite(e.ageMs) && e.ageMs >= 0) noteProgress(e.id, askedAt - e.ageMs);
}
