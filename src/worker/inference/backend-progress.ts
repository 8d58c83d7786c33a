/**
 * When this isolate last received answer bytes from each backend: the evidence that tells a busy engine from a
 * hung one. A streamed request's first event is its queueing plus its prefill; under a traffic spike a healthy
 * engine's queue makes it 10-60 s late or more, and a fixed first-event deadline then turned answers the engine
 * was about to give into 504s, retries onto an already saturated fleet and ejections of busy backends
 * (bench/results/red-team.md "Overload: a slow fleet"). A backend that is streaming tokens to other requests is
 * alive: its waiting request is queued, not lost. A hung engine sends nothing to anyone, so its requests still
 * time out at UPSTREAM_FIRST_BYTE_TIMEOUT_MS.
 *
 * Only 2xx answers count, when something of them is relayed (a first chunk, an event): response headers prove
 * nothing (vLLM sends them on accepting a request, before its engine has done any work), nor do error answers,
 * nor bytes that complete nothing (a trickle: the idle deadline does not count those either). One entry per configured backend id: bounded by
 * BACKENDS.
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
