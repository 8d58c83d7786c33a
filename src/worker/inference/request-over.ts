/**
 * Keeps an inference request's work alive after its client left, until the request has been reported over.
 *
 * When a client disconnects, workerd tears the request's context down at once unless a waitUntil() is pending
 * (cloudflare/workerd#5062, kentonv there: "as soon as the client disconnects, the entire request context is
 * torn down immediately"). It delivers request.signal's abort event (enable_request_signal) under a waitUntil of
 * its own that ends with the event's listeners. What a listener starts synchronously survives (key-limits.ts
 * releases its slot so); what follows asynchronously did not: the listener in upstream.ts aborts the backend's
 * fetch, and the chain from that fetch's rejection to the lease's end (attempts.ts, respond.ts, the report in
 * router-client.ts) ran in a context already gone. The backend's request was cut with the context, but its
 * RouterDO lease was never ended: it held a slot of the backend's in-flight count until LEASE_TTL_SECONDS (600 s
 * by default), and the request was never logged. Seen in local workerd with a client that resets its connection
 * (a FIN before the headers is not seen at all there: red-team.md, branch client-leave); it is how the edge
 * delivers any client's leaving.
 *
 * So when the signal fires, the listener itself hands the runtime a promise that settles once the request's
 * outcome is reported (`over()`, called exactly once by whoever reports it, or when the handler throws): the
 * context lives until then. The runtime bounds it (30 s after the client left, in production); the deadlines of
 * the request's own waits (connect, first event, idle) are shorter or end at the abort itself.
 */

export interface RequestOver {
  /** The request's outcome is reported (or there is none to report): its context may end. Idempotent. */
  over(): void;
}

export function keepAliveUntilOver(
  client: AbortSignal,
  waitUntil: (p: Promise<unknown>) => void,
): RequestOver {
  let settle!: () => void;
  const settled = new Promise<void>((r) => {
    settle = r;
  });
  let done = false;
  // Registered inside the abort event, synchronously: the one moment the runtime still takes a waitUntil.
  const onClientGone = () => waitUntil(settled);
  // A client already gone (it left while its body was read): its event fired before this listener; the context
  // is still alive now (this code runs), so the promise is handed over at once.
  if (client.aborted) onClientGone();
  else client.addEventListener("abort", onClientGone, { once: true });
  return {
    over() {
      if (done) return;
      done = true;
      client.removeEventListener("abort", onClientGone);
      settle();
    },
  };
}
