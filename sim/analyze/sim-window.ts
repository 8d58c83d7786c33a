/**
 * The part of the input the simulator replays: the first `maxRequests`
 * requests in input order (a window keeps what a sample of scattered
 * requests would lose: conversations keep their turns and the arrival rate
 * stays the log's), cut short once the requests held as token ids (OpenAI
 * logs) reach `maxTokenIds` (4 bytes each). The rest of the log is only
 * counted: requests and arrival span, for the log's own rate.
 */
import { MOONCAKE_BLOCK_TOKENS } from "../workloads/mooncake";
import { OPENAI_LOG_BLOCK_TOKENS } from "../workloads/openai-log";
import type { Workload, WorkloadRequest } from "../workloads/types";
import type { KeyedRequest } from "./keyed-request";

export const DEFAULT_WINDOW_REQUESTS = 20_000;
/** 2^25 token ids: 128 MiB. */
export const DEFAULT_WINDOW_TOKEN_IDS = 1 << 25;

export interface SimWindowOptions {
  readonly maxRequests: number;
  readonly maxTokenIds?: number;
}

export class SimWindow {
  private readonly requests: WorkloadRequest[] = [];
  private tokenIds = 0;
  private mooncake = 0;
  private closed = false;
  /** Whole-log arrival span and count (not only the window's). */
  private firstArrival = Number.POSITIVE_INFINITY;
  private lastArrival = Number.NEGATIVE_INFINITY;
  private seen = 0;

  constructor(private readonly opts: SimWindowOptions) {}

  offer(r: KeyedRequest): void {
    this.seen++;
    this.firstArrival = Math.min(this.firstArrival, r.arrivalMs);
    this.lastArrival = Math.max(this.lastArrival, r.arrivalMs);
    if (this.closed) return;
    const w = r.workload();
    const ids = w.prompt.kind === "tokens" ? w.prompt.tokens.length : 0;
    if (
      this.requests.length >= this.opts.maxRequests ||
      this.tokenIds + ids > (this.opts.maxTokenIds ?? DEFAULT_WINDOW_TOKEN_IDS)
    ) {
      this.closed = true;
      return;
    }
    this.tokenIds += ids;
    if (r.format === "mooncake") this.mooncake++;
    this.requests.push(w);
  }

  /** Mean requests per second over the whole input (0 for fewer than two distinct arrival times). */
  get logRatePerSec(): number {
    const span = this.lastArrival - this.firstArrival;
    return span > 0 ? (this.seen / span) * 1000 : 0;
  }

  /** Hours the whole input spans. */
  get logHours(): number {
    return this.seen > 0 ? (this.lastArrival - this.firstArrival) / 3_600_000 : 0;
  }

  /** The window as a workload: sorted by arrival, rebased to its first request. */
  workload(name: string): Workload {
    const sorted = this.requests
      .map((r, i) => [r, i] as const)
      .sort((a, b) => a[0].arrivalMs - b[0].arrivalMs || a[1] - b[1]);
    const t0 = sorted.length > 0 ? sorted[0]![0].arrivalMs : 0;
    return {
      name,
      // As the trace reader decides: Mooncake's hash ids are 512-token blocks, the rest 16.
      blockTokens: this.mooncake * 2 > this.requests.length ? MOONCAKE_BLOCK_TOKENS : OPENAI_LOG_BLOCK_TOKENS,
      requests: sorted.map(([r]) => ({ ...r, arrivalMs: r.arrivalMs - t0 })),
      malformed: 0,
    };
  }
}
