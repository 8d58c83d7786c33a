/**
 * Drives one EngineModel with the wall clock. Model time (ms) runs `speed`
 * times faster than real time; a single timer is armed for the model's next
 * event, and while any stream is decoding a short ticker turns decode
 * progress (tokensGenerated) into streamed tokens between events.
 */
import { EngineModel } from "../../sim/model/engine-model";
import type { EngineConfig, EngineEvent, EngineMetrics, EngineRequest } from "../../sim/model/types";

export interface RequestListener {
  onFirstToken(cachedTokens: number): void;
  /** Decode progress: total output tokens produced so far (monotonic, ≤ outputTokens). */
  onProgress(tokens: number): void;
  onDone(cachedTokens: number, outputTokens: number): void;
}

/** Real-time poll period while streams decode, ms (several model steps at usual speeds). */
const TICK_MS = 5;

export class EngineDriver {
  readonly engine: EngineModel;
  private readonly speed: number;
  private readonly t0 = performance.now();
  private readonly listeners = new Map<string, RequestListener>();
  private readonly decoding = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(config: EngineConfig, speed: number) {
    if (!(Number.isFinite(speed) && speed > 0)) throw new RangeError(`speed must be > 0, got ${speed}`);
    this.engine = new EngineModel(config);
    this.speed = speed;
  }

  /** Current model time, ms. */
  now(): number {
    return (performance.now() - this.t0) * this.speed;
  }

  submit(req: EngineRequest, listener: RequestListener): void {
    this.listeners.set(req.id, listener);
    this.engine.submit(req, this.now());
    this.pump();
  }

  abort(id: string): void {
    if (!this.listeners.delete(id)) return;
    this.decoding.delete(id);
    this.engine.abort(id, this.now());
    this.pump();
  }

  metrics(): EngineMetrics {
    return this.engine.metrics(this.now());
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.ticker);
    this.listeners.clear();
    this.decoding.clear();
  }

  /** Delivers everything due, streams progress, and re-arms the timers. */
  private pump(): void {
    if (this.closed) return;
    const now = this.now();
    this.dispatch(this.engine.advance(now));
    for (const id of this.decoding) this.listeners.get(id)?.onProgress(this.engine.tokensGenerated(id, now));
    clearTimeout(this.timer);
    this.timer = undefined;
    const next = this.engine.nextEventTime();
    if (Number.isFinite(next)) {
      const delay = Math.max(0, (next - now) / this.speed);
      // setTimeout clamps delays above 2^31-1 ms; an idle-ish engine just wakes up and re-arms.
      this.timer = setTimeout(() => this.pump(), Math.min(delay + 0.5, 2 ** 31 - 1));
    }
    if (this.decoding.size > 0 && this.ticker === undefined) {
      this.ticker = setInterval(() => this.pump(), TICK_MS);
    } else if (this.decoding.size === 0 && this.ticker !== undefined) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  private dispatch(events: readonly EngineEvent[]): void {
    for (const e of events) {
      const l = this.listeners.get(e.id);
      if (l === undefined) continue;
      if (e.kind === "first_token") {
        this.decoding.add(e.id);
        l.onFirstToken(e.cachedTokens);
        l.onProgress(1);
      } else {
        this.decoding.delete(e.id);
        this.listeners.delete(e.id);
        l.onProgress(e.outputTokens);
        l.onDone(e.cachedTokens, e.outputTokens);
      }
    }
  }
}
