import { describe, expect, it } from "vitest";
import { KeyedRetryBudget, RetryBudget } from "./retry-budget";

describe("RetryBudget", () => {
  it("starts full, so an idle pool can retry, then allows ratio × requests", () => {
    const b = new RetryBudget(0.2, 3);
    expect([b.tryWithdraw(), b.tryWithdraw(), b.tryWithdraw(), b.tryWithdraw()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    for (let k = 0; k < 4; k++) b.deposit();
    expect(b.tryWithdraw()).toBe(false);
    b.deposit();
    expect(b.tryWithdraw()).toBe(true);
    expect(b.stats()).toEqual({ retried: 4, refused: 2, available: 0 });
  });

  it("keeps retries within ratio × requests + burst when every request fails", () => {
    const b = new RetryBudget(0.2, 10);
    let retries = 0;
    for (let k = 0; k < 10_000; k++) {
      b.deposit();
      if (b.tryWithdraw()) retries++;
    }
    expect(retries).toBeLessThanOrEqual(0.2 * 10_000 + 10);
    expect(retries).toBeGreaterThanOrEqual(0.2 * 10_000 - 1);
  });

  it("holds at most `burst` and rejects bad settings", () => {
    const b = new RetryBudget(0.5, 2);
    for (let k = 0; k < 100; k++) b.deposit();
    expect(b.stats().available).toBe(2);
    expect(() => new RetryBudget(1.5, 1)).toThrow(/ratio/);
    expect(() => new RetryBudget(0.2, -1)).toThrow(/burst/);
  });
});

describe("KeyedRetryBudget", () => {
  /** `n` requests by `key` that each fail and ask for a retry; how many were granted. */
  const failing = (b: KeyedRetryBudget, key: string | undefined, n: number) => {
    let granted = 0;
    for (let i = 0; i < n; i++) {
      b.deposit(key);
      if (b.tryWithdraw(key)) granted++;
    }
    return granted;
  };

  it("one key failing every request leaves the pool's budget to the others", () => {
    const b = new KeyedRetryBudget(new RetryBudget(0.2, 10), 5, 1024);
    // Its own burst (5) and what its own 100 requests earn (0.2 each), no more.
    const flood = failing(b, "flood", 100);
    expect(flood).toBeGreaterThanOrEqual(24); // 5 + 0.2 × 100, less a token lost to float sums
    expect(flood).toBeLessThanOrEqual(25);
    // The others still find the pool's retries: what the flood did not take of its burst, and its deposits.
    expect(b.pool.stats().available).toBeGreaterThanOrEqual(4);
    expect(failing(b, "victim", 4)).toBe(4);
    expect(b.stats().refusedByKey).toBe(100 - flood);
  });

  it("the pool's own bound still holds across keys: many keys failing get ratio × requests + burst in all", () => {
    const b = new KeyedRetryBudget(new RetryBudget(0.2, 10), 5, 1024);
    let granted = 0;
    for (let i = 0; i < 500; i++) granted += failing(b, `k${i % 50}`, 1);
    expect(granted).toBeLessThanOrEqual(0.2 * 500 + 10);
    expect(granted).toBeGreaterThanOrEqual(0.2 * 500);
  });

  it("without a key, the pool's bucket alone decides (as before)", () => {
    const keyed = new KeyedRetryBudget(new RetryBudget(0.2, 10), 5, 1024);
    const plain = new RetryBudget(0.2, 10);
    let granted = 0;
    for (let i = 0; i < 100; i++) {
      plain.deposit();
      if (plain.tryWithdraw()) granted++;
    }
    expect(failing(keyed, undefined, 100)).toBe(granted);
    expect(granted).toBeGreaterThan(25);
  });

  it("remembers at most maxKeys keys, least recently used first out, and rejects bad settings", () => {
    const b = new KeyedRetryBudget(new RetryBudget(1, 1000), 2, 2);
    expect(failing(b, "a", 5)).toBe(5); // ratio 1: every retry earned
    b.tryWithdraw("a");
    b.tryWithdraw("a");
    expect(b.tryWithdraw("a")).toBe(false);
    b.deposit("b");
    b.deposit("c"); // "a" forgotten: it starts again with a full bucket
    expect(b.tryWithdraw("a")).toBe(true);
    expect(() => new KeyedRetryBudget(new RetryBudget(0.2, 10), 0.5, 10)).toThrow(RangeError);
    expect(() => new KeyedRetryBudget(new RetryBudget(0.2, 10), 5, 0)).toThrow(RangeError);
  });
});
