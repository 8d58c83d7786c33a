import { describe, expect, it } from "vitest";
import { RetryBudget } from "./retry-budget";

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
