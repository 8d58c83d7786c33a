import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { deadline } from "./deadline";

/** A promise and the hands that settle it. */
function pending<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("deadline", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("passes on a value that comes in time, without calling onTimeout, and clears its timer", async () => {
    const p = pending<string>();
    const onTimeout = vi.fn(() => "late");
    const raced = deadline(p.promise, 100, onTimeout);
    await vi.advanceTimersByTimeAsync(99);
    p.resolve("answer");
    await expect(raced).resolves.toBe("answer");
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it("passes on a rejection that comes in time, as is, and clears its timer", async () => {
    const p = pending<string>();
    const raced = deadline(p.promise, 100, () => {
      throw new Error("late");
    });
    const cause = new Error("broke");
    p.reject(cause);
    await expect(raced).rejects.toBe(cause);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects with what onTimeout throws once ms pass, and only then", async () => {
    const p = pending<string>();
    const late = new Error("no answer within 100 ms");
    const onTimeout = vi.fn((): never => {
      throw late;
    });
    const raced = deadline(p.promise, 100, onTimeout);
    const settled = raced.then(
      () => "resolved",
      (e: unknown) => e,
    );
    await vi.advanceTimersByTimeAsync(99);
    expect(onTimeout).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled).toBe(late);
    expect(onTimeout).toHaveBeenCalledTimes(1);
    // The loser settling afterwards changes nothing.
    p.resolve("too late");
    await expect(raced).rejects.toBe(late);
  });

  it("resolves with what onTimeout returns once ms pass (a marker the caller tells apart)", async () => {
    const TIMED_OUT = Symbol("timed out");
    const raced = deadline(pending<number>().promise, 50, () => TIMED_OUT);
    await vi.advanceTimersByTimeAsync(50);
    await expect(raced).resolves.toBe(TIMED_OUT);
    expect(vi.getTimerCount()).toBe(0);
  });
});
