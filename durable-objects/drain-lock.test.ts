import { describe, expect, it } from "vitest";
import { DeadlineLock } from "./drain-lock";

describe("DeadlineLock", () => {
  it("one holder at a time; released or past its deadline, the next takes it", () => {
    const lock = new DeadlineLock();
    expect(lock.take("a", 0, 1000)).toEqual({ ok: true });
    expect(lock.take("b", 10, 1000)).toEqual({ ok: false, heldForMs: 990 });
    expect(lock.take("a", 20, 1000)).toEqual({ ok: true }); // renewed by its holder
    lock.release("b"); // not b's: nothing freed
    expect(lock.take("b", 30, 1000).ok).toBe(false);
    lock.release("a");
    expect(lock.take("b", 40, 1000)).toEqual({ ok: true });
    // b never releases: its deadline frees the lock; b's late release then frees nothing of c's.
    expect(lock.take("c", 1039, 1000).ok).toBe(false);
    expect(lock.take("c", 1040, 1000)).toEqual({ ok: true });
    lock.release("b");
    expect(lock.take("d", 1050, 1000).ok).toBe(false);
  });
});
