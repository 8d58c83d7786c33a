/**
 * Open-loop replay: requests go out at their arrival times whether or not
 * earlier ones have answered (a closed loop would slow down exactly when the
 * system under test does, and hide its queueing). The schedule is kept on an
 * absolute clock so timer drift does not accumulate; how late each send was
 * is recorded, so a client that could not keep up shows in the report
 * instead of silently lowering the rate.
 */
import type { RequestResult } from "./stream-client";

export interface ReplayItem {
  /** Wall-clock ms from the start of the replay. */
  readonly atMs: number;
}

export interface ReplayRecord<T extends ReplayItem> {
  readonly item: T;
  readonly index: number;
  /** When it actually went out, ms from the start (≥ item.atMs). */
  readonly sentMs: number;
  readonly result: RequestResult;
}

export interface ReplayOptions<T extends ReplayItem> {
  readonly items: readonly T[];
  /** Sends one request; must resolve (never reject) with its outcome. */
  readonly send: (item: T, index: number) => Promise<RequestResult>;
  /** Called after each request ends (progress display). */
  readonly onDone?: (record: ReplayRecord<T>, inflight: number) => void;
}

export interface ReplayRun<T extends ReplayItem> {
  readonly records: readonly ReplayRecord<T>[];
  /** ms from start until the last response ended. */
  readonly wallMs: number;
  /** Largest inflight count seen. */
  readonly peakInflight: number;
}

/** Waits until ≤ 1 ms before the due time (timers may fire a little early: loop). */
async function sleepUntil(start: number, atMs: number): Promise<void> {
  for (let wait = start + atMs - performance.now(); wait > 1; wait = start + atMs - performance.now())
    await new Promise((r) => setTimeout(r, wait));
}

export async function replayOpenLoop<T extends ReplayItem>(opts: ReplayOptions<T>): Promise<ReplayRun<T>> {
  const items = [...opts.items].sort((a, b) => a.atMs - b.atMs);
  const records: ReplayRecord<T>[] = [];
  const pending: Promise<void>[] = [];
  let inflight = 0;
  let peakInflight = 0;
  const start = performance.now();
  for (let index = 0; index < items.length; index++) {
    const item = items[index]!;
    await sleepUntil(start, item.atMs);
    const sentMs = performance.now() - start;
    inflight++;
    peakInflight = Math.max(peakInflight, inflight);
    pending.push(
      opts.send(item, index).then((result) => {
        inflight--;
        const record = { item, index, sentMs, result };
        records.push(record);
        opts.onDone?.(record, inflight);
      }),
    );
  }
  await Promise.all(pending);
  records.sort((a, b) => a.index - b.index);
  return { records, wallMs: performance.now() - start, peakInflight };
}

/**
 * Client-side least-outstanding over a list of targets (the `direct` arm):
 * the fewest requests in flight wins; ties rotate so equal targets share work.
 */
export class LeastOutstanding {
  private readonly inflight: number[];
  private next = 0;

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`size must be ≥ 1, got ${size}`);
    this.inflight = new Array<number>(size).fill(0);
  }

  acquire(): number {
    let best = -1;
    for (let k = 0; k < this.size; k++) {
      const i = (this.next + k) % this.size;
      if (best < 0 || this.inflight[i]! < this.inflight[best]!) best = i;
    }
    this.next = (best + 1) % this.size;
    this.inflight[best]!++;
    return best;
  }

  release(i: number): void {
    if (this.inflight[i]! <= 0) throw new Error(`release of target ${i} with nothing in flight`);
    this.inflight[i]!--;
  }

  load(): readonly number[] {
    return this.inflight;
  }
}
