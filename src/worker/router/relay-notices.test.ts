import { describe, expect, it } from "vitest";
import { RelayNotices } from "./relay-notices";

const EVERY = 1000;

describe("RelayNotices", () => {
  it("asks for one flush per cell while notices wait, and keeps the newest relay time", () => {
    const n = new RelayNotices();
    const first = n.relayed("c", "b1", 100, EVERY);
    expect(first).toBeDefined();
    expect(n.relayed("c", "b1", 300, EVERY)).toBeUndefined();
    expect(n.relayed("c", "b1", 200, EVERY)).toBeUndefined(); // older: never moves it back
    expect(n.relayed("c", "b2", 250, EVERY)).toBeUndefined(); // the cell's flush is already asked for
    expect(n.relayed("d", "b1", 250, EVERY)).toBeDefined(); // another cell, its own flush
    expect(n.waiting("c")).toBe(2);
    expect(n.take("c", 400)).toEqual([
      { id: "b1", ageMs: 100 },
      { id: "b2", ageMs: 150 },
    ]);
    expect(n.waiting("c")).toBe(0);
    expect(n.take("c", 400)).toEqual([]);
  });

  it("gives a backend at most one notice per `everyMs` after the last was taken, however much it relays", () => {
    const n = new RelayNotices();
    let flushes = 0;
    let taken = 0;
    // A token every 10 ms for 10 s, taken (a route call, a flush) every 50 ms.
    for (let t = 0; t < 10_000; t += 10) {
      if (n.relayed("c", "b1", t, EVERY) !== undefined) flushes++;
      if (t % 50 === 0) taken += n.take("c", t).length;
    }
    expect(taken).toBeLessThanOrEqual(10_000 / EVERY + 1);
    expect(taken).toBeGreaterThanOrEqual(10_000 / EVERY - 1);
    expect(flushes).toBe(taken);
  });

  it("a flush sends only the batch that scheduled it, never a later one a route call may still carry", () => {
    const n = new RelayNotices();
    const one = n.relayed("c", "b1", 0, EVERY)!;
    expect(n.take("c", 10)).toHaveLength(1); // a route call carried batch one
    const two = n.relayed("c", "b2", 20, EVERY)!;
    expect(two).not.toBe(one);
    expect(n.takeBatch("c", one, 400)).toEqual([]); // batch one's flush: nothing of its own left
    expect(n.takeBatch("c", two, 420)).toEqual([{ id: "b2", ageMs: 400 }]);
    expect(n.takeBatch("c", two, 430)).toEqual([]);
  });

  it("keeps the newest relay time of a waiting notice", () => {
    const n = new RelayNotices();
    n.relayed("c", "b1", 10, EVERY);
    n.relayed("c", "b1", 30, EVERY);
    n.relayed("c", "b1", 20, EVERY);
    expect(n.take("c", 30)).toEqual([{ id: "b1", ageMs: 0 }]);
  });

  it("forgets a backend whose rate limit lapsed with nothing waiting (bounded by the backends relaying lately)", () => {
    const n = new RelayNotices();
    n.relayed("c", "gone", 0, EVERY);
    n.take("c", 0);
    n.relayed("c", "b1", 5000, EVERY);
    n.take("c", 5000); // drops "gone": nothing waiting, limit lapsed
    expect(n.relayed("c", "gone", 5001, EVERY)).toBeDefined();
    expect(n.relayed("c", "b1", 5002, EVERY)).toBeUndefined(); // still limited
    expect(n.take("c", 5002)).toEqual([{ id: "gone", ageMs: 1 }]);
  });
});
