/**
 * The RouterDO's scrape of its backends' Prometheus /metrics
 * (ENGINE_SCRAPE_MS): when a round is due, what it reads, where the
 * readings go. The DO's one alarm covers it (nextAt() is one of its
 * deadlines), and the Routers read the readings through `book`
 * (FleetView.engineSignals), so the cost model sees load this gateway did
 * not place.
 *
 * Bounds: a round scrapes every backend, at most SCRAPE_CONCURRENCY at a
 * time (a Worker invocation keeps six connections open at once; more would
 * queue inside the runtime, eating into their deadlines); each scrape ends
 * within min(interval, SCRAPE_DEADLINE_MAX_MS) and reads at most
 * SCRAPE_MAX_BYTES of body (fetch-metrics.ts). A failed scrape records
 * nothing: the backend's last reading ages and is forgotten after
 * engineSignalMaxAgeMs, and routing goes on without it. Nothing here can
 * fail a route call: the DO awaits rounds in its alarm, never on the data
 * path.
 *
 * Cost: each round is one alarm invocation (a billed Durable Object
 * request) and one subrequest per backend. Rounds run only while the pool
 * routes: after SCRAPE_IDLE_AFTER_MS without a route call the scrape stops,
 * and the next route call starts it again. Off (interval 0), nothing is
 * ever fetched and no alarm is set for it.
 */

import { engineSignalMaxAgeMs } from "../src/routing/defaults";
import { EngineSignalBook } from "../src/routing/engine-signal-book";
import { fetchEngineMetrics } from "../src/worker/engine-scrape/fetch-metrics";
import type { EngineScrapeStatus } from "../src/worker/router/router-rpc";
import { eachAtMost } from "./at-most";

/** Body bytes read per scrape at most: vLLM's whole exposition is tens of KiB, the gauges come first. */
export const SCRAPE_MAX_BYTES = 256 * 1024;
/** A scrape's deadline is the interval, and never more than this. */
export const SCRAPE_DEADLINE_MAX_MS = 2000;
/** Scrapes in flight at once within a round. */
export const SCRAPE_CONCURRENCY = 6;
/** The scrape stops this long after the pool's last route call. */
export const SCRAPE_IDLE_AFTER_MS = 60_000;

export interface ScrapeTarget {
  readonly id: string;
  readonly url: string;
  /** The backend's BACKENDS apiKey, sent as requests send it (a proxy may guard /metrics too). */
  readonly apiKey?: string;
}

export class EngineScraper {
  readonly book = new EngineSignalBook(1);
  private intervalMs = 0;
  private targets: readonly ScrapeTarget[] = [];
  private lastRoutedAt = Number.NEGATIVE_INFINITY;
  private lastRoundAt = Number.NEGATIVE_INFINITY;
  private inRound = false;
  private rounds = 0;
  private lastRoundMs: number | undefined;
  private failures = 0;
  private readonly failing = new Map<string, { reason: string; at: number }>();

  /**
   * @param fetcher the runtime's fetch (tests pass their own)
   * @param clock epoch ms
   */
  constructor(
    private readonly fetcher: typeof fetch = (input, init) => fetch(input, init),
    private readonly clock: () => number = Date.now,
  ) {}

  /** The pool's interval (0: off) and backends, in the Routers' order; a backend that moved loses its reading. */
  configure(intervalMs: number, targets: readonly ScrapeTarget[]): void {
    const urls = new Map(this.targets.map((t) => [t.id, t.url]));
    this.intervalMs = intervalMs;
    this.targets = targets.map((t) => ({
      id: t.id,
      url: t.url,
      ...(t.apiKey !== undefined ? { apiKey: t.apiKey } : {}),
    }));
    this.book.setBackends(this.targets.map((t) => t.id));
    for (const id of [...this.failing.keys()])
      if (!this.targets.some((t) => t.id === id)) this.failing.delete(id);
    for (const t of this.targets) if (urls.has(t.id) && urls.get(t.id) !== t.url) this.book.forget(t.id);
    if (intervalMs > 0) this.book.setMaxAge(engineSignalMaxAgeMs(intervalMs));
  }

  /** The pool routed a request: the scrape runs while it does. */
  routed(now: number): void {
    this.lastRoutedAt = now;
  }

  /** When the next round is due; undefined when off, or idle (no route call for SCRAPE_IDLE_AFTER_MS). */
  nextAt(): number | undefined {
    // Never routed since this object started: no round (and never a non-finite alarm time).
    if (this.intervalMs <= 0 || this.targets.length === 0 || !Number.isFinite(this.lastRoutedAt))
      return undefined;
    const next = Math.max(this.lastRoundAt + this.intervalMs, this.lastRoutedAt);
    return next > this.lastRoutedAt + SCRAPE_IDLE_AFTER_MS ? undefined : next;
  }

  due(now: number): boolean {
    const next = this.nextAt();
    return !this.inRound && next !== undefined && now >= next;
  }

  /**
   * One round: every backend's /metrics, each reading recorded with the time
   * its headers arrived and `own(id)`, the pool's requests in flight there
   * at that moment. Stale readings are forgotten at the end.
   */
  async run(now: number, own: (id: string) => number): Promise<void> {
    if (this.inRound) return;
    this.inRound = true;
    this.lastRoundAt = now;
    const deadlineMs = Math.min(this.intervalMs, SCRAPE_DEADLINE_MAX_MS);
    try {
      await eachAtMost(this.targets, SCRAPE_CONCURRENCY, (t) => this.scrape(t, deadlineMs, own));
    } finally {
      const end = this.clock();
      this.book.expire(end);
      this.rounds++;
      this.lastRoundMs = end - now;
      this.inRound = false;
    }
  }

  /** What the scrape has been doing, for the pool's stats. */
  status(): EngineScrapeStatus {
    return {
      intervalMs: this.intervalMs,
      readings: this.book.size,
      rounds: this.rounds,
      ...(this.lastRoundMs !== undefined ? { lastRoundMs: this.lastRoundMs } : {}),
      failures: this.failures,
      failing: Object.fromEntries(this.failing),
    };
  }

  private async scrape(t: ScrapeTarget, deadlineMs: number, own: (id: string) => number): Promise<void> {
    let sampledAt = 0;
    let ownInflight = 0;
    const r = await fetchEngineMetrics(`${t.url}/metrics`, {
      deadlineMs,
      maxBytes: SCRAPE_MAX_BYTES,
      fetch: this.fetcher,
      ...(t.apiKey !== undefined ? { apiKey: t.apiKey } : {}),
      onHeaders: () => {
        sampledAt = this.clock();
        ownInflight = own(t.id);
      },
    });
    // The backend may have left the pool, or moved, while we waited.
    if (!this.targets.some((x) => x.id === t.id && x.url === t.url)) return;
    if (!r.ok) {
      this.failures++;
      // No address in it (fetchFailure): stats name backends by id, never by URL.
      this.failing.set(t.id, { reason: r.reason, at: this.clock() });
      return;
    }
    this.failing.delete(t.id);
    const { running, waiting, kvUsage } = r.reading;
    this.book.record(t.id, { running, waiting, kvUsage, sampledAt, ownInflight });
  }
}
