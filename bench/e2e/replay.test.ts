import { describe, expect, it } from "vitest";
import { LeastOutstanding, replayOpenLoop } from "./replay";
import type { RequestResult } from "./stream-client";

const ok = (e2eMs: number): RequestResult => ({ outcome: "ok", status: 200, e2eMs, contentChunks: 1 });

describe("replayOpenLoop", () => {
  it("sends on schedule without waiting for earlier responses", async () => {
    const items = [0, 20, 40, 60].map((atMs) => ({ atMs }));
    const sentAt: number[] = [];
    let firstAnswer = Number.POSITIVE_INFINITY;
    const t0 = performance.now();
    const run = await replayOpenLoop({
      items,
      send: async () => {
        sentAt.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 150));
        firstAnswer = Math.min(firstAnswer, performance.now() - t0);
        return ok(150);
      },
    });
    expect(run.records).toHaveLength(4);
    // Every request was sent before the first one answered: open loop.
    expect(Math.max(...sentAt)).toBeLessThan(firstAnswer);
    expect(run.peakInflight).toBe(4);
    for (const r of run.records) expect(r.sentMs).toBeGreaterThanOrEqual(r.item.atMs - 1);
    expect(run.records.map((r) => r.index)).toEqual([0, 1, 2, 3]);
  });
});

describe("LeastOutstanding", () => {
  it("picks the least loaded target and rotates ties", () => {
    const lo = new LeastOutstanding(3);
    expect([lo.acquire(), lo.acquire(), lo.acquire()]).toEqual([0, 1, 2]);
    lo.release(1);
    expect(lo.acquire()).toBe(1);
    lo.release(0);
    lo.release(2);
    expect(lo.acquire()).toBe(2);
    expect(lo.acquire()).toBe(0);
    expect(lo.load()).toEqual([1, 1, 1]);
    expect(() => new LeastOutstanding(3).release(0)).toThrow();
  });
});
