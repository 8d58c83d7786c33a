/**
 * Closed-loop streaming clients: each sends a request, reads it to its end,
 * and sends the next, until told to stop — so a fixed number of streams is
 * always in flight, whatever the gateway's latency. Every request gets an
 * x-request-id the gateway keeps in its log line, and ends as one record.
 */
import { type RequestResult, streamRequest } from "../e2e/stream-client";
import { type Ending, endingOf } from "./ending";

export interface RequestRecord {
  readonly id: string;
  /** ms since the run's start (RunClock). */
  readonly startMs: number;
  readonly endMs: number;
  readonly status: number;
  readonly ending: Ending;
  readonly backend?: string;
  readonly route?: string;
  readonly ttftMs?: number;
  readonly retryAfter?: string;
  readonly error?: string;
}

/** ms since a fixed start, on the monotonic clock. */
export class RunClock {
  private readonly t0 = performance.now();
  now(): number {
    return performance.now() - this.t0;
  }
}

export interface OneRequest {
  readonly url: string;
  readonly apiKey: string;
  readonly body: string;
  readonly id: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

export function toRecord(id: string, startMs: number, endMs: number, r: RequestResult): RequestRecord {
  return {
    id,
    startMs,
    endMs,
    status: r.status,
    ending: endingOf(r),
    ...(r.backend !== undefined ? { backend: r.backend } : {}),
    ...(r.route !== undefined ? { route: r.route } : {}),
    ...(r.ttftMs !== undefined ? { ttftMs: r.ttftMs } : {}),
    ...(r.retryAfter !== undefined ? { retryAfter: r.retryAfter } : {}),
    ...(r.error !== undefined && r.outcome !== "ok" ? { error: r.error.slice(0, 200) } : {}),
  };
}

/** One request through the gateway, timed on `clock`. */
export async function sendOne(req: OneRequest, clock: RunClock): Promise<RequestRecord> {
  const startMs = clock.now();
  const r = await streamRequest({
    url: `${req.url}/v1/chat/completions`,
    apiKey: req.apiKey,
    body: req.body,
    timeoutMs: req.timeoutMs,
    headers: { "x-request-id": req.id },
    ...(req.signal !== undefined ? { signal: req.signal } : {}),
  });
  return toRecord(req.id, startMs, clock.now(), r);
}

export interface TrafficOptions {
  /** The gateway's base url, read per request (a restarted gateway moves). */
  readonly url: () => string;
  readonly apiKey: string;
  readonly clients: number;
  /** Body of client c's n-th request. */
  readonly body: (client: number, n: number) => string;
  /** Request ids are `${idPrefix}-${client}-${n}` (the gateway keeps ids of 8+ safe characters). */
  readonly idPrefix: string;
  readonly clock: RunClock;
  readonly timeoutMs: number;
}

export interface Traffic {
  /** Every finished request so far, in the order they ended. */
  readonly records: RequestRecord[];
  /** Requests in flight right now. */
  inflight(): number;
  /** Lets each client finish its current request, then resolves. */
  stop(): Promise<void>;
}

export function startTraffic(opts: TrafficOptions): Traffic {
  const records: RequestRecord[] = [];
  let stopping = false;
  let inflight = 0;
  const client = async (c: number): Promise<void> => {
    for (let n = 0; !stopping; n++) {
      inflight++;
      try {
        records.push(
          await sendOne(
            {
              url: opts.url(),
              apiKey: opts.apiKey,
              body: opts.body(c, n),
              id: `${opts.idPrefix}-${c}-${n}`,
              timeoutMs: opts.timeoutMs,
            },
            opts.clock,
          ),
        );
      } finally {
        inflight--;
      }
    }
  };
  const running = Array.from({ length: opts.clients }, (_, c) => client(c));
  return {
    records,
    inflight: () => inflight,
    async stop() {
      stopping = true;
      await Promise.all(running);
    },
  };
}
