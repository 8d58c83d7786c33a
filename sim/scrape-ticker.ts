/**
 * Engine readings as the gateway's scrape takes them
 * (durable-objects/engine-scrape.ts), in virtual time: every `intervalMs`
 * from the first arrival, each engine's running and waiting requests and KV
 * use at that instant, with the router's own requests in flight there at the
 * same instant, go into the routing core's EngineSignalBook — the book the
 * RouterDO fills from /metrics. Between ticks a reading only ages, so our
 * policies see the fleet as the last scrape saw it, never live. (The real
 * scrape lands a few ms after the engine rendered it; at intervals of 100 ms
 * and more that lag is left out.)
 */
import { EngineSignalBook } from "../src/routing/engine-signal-book";
import type { EngineModel } from "./model/engine-model";

export class ScrapeTicker {
  readonly book: EngineSignalBook;
  /** Virtual time of the next scrape. */
  nextAt: number;

  constructor(
    readonly intervalMs: number,
    startMs: number,
    ids: readonly string[],
    maxAgeMs: number,
  ) {
    if (!(intervalMs > 0)) throw new RangeError(`intervalMs must be > 0, got ${intervalMs}`);
    this.book = new EngineSignalBook(maxAgeMs);
    this.book.setBackends(ids);
    this.nextAt = startMs;
  }

  /** Takes the scrape due at nextAt: engines read at that instant, `own[i]` the router's in flight on i. */
  tick(engines: readonly EngineModel[], ids: readonly string[], own: Int32Array): void {
    const at = this.nextAt;
    for (let i = 0; i < engines.length; i++) {
      const m = engines[i]!.metrics(at);
      this.book.record(ids[i]!, {
        running: m.running,
        waiting: m.waiting,
        kvUsage: m.kvUsage,
        sampledAt: at,
        ownInflight: own[i]!,
      });
    }
    this.nextAt = at + this.intervalMs;
  }
}
