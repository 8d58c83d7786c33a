import { describe, expect, it } from "vitest";
import { CompleteOutbox } from "./complete-carry";

const report = (leaseId: string) => ({ leaseId, outcome: { ok: true } });

describe("CompleteOutbox", () => {
  it("hands each report out once, oldest first, per cell", () => {
    const box = new CompleteOutbox();
    const a = box.add("cell-1", report("a"));
    const b = box.add("cell-1", report("b"));
    const c = box.add("cell-2", report("c"));
    expect(box.take("cell-1", 1).map((r) => r.leaseId)).toEqual(["a"]);
    expect([a.taken, b.taken, c.taken]).toEqual([true, false, false]);
    expect(box.take("cell-1", 10).map((r) => r.leaseId)).toEqual(["b"]);
    expect(box.take("cell-1", 10)).toEqual([]);
    expect(box.waiting("cell-2")).toBe(1);
    expect(box.take("cell-2", 10).map((r) => r.leaseId)).toEqual(["c"]);
    expect(c.taken).toBe(true);
    expect(box.waiting("cell-2")).toBe(0);
  });

  it("never hands out more than asked", () => {
    const box = new CompleteOutbox();
    for (let i = 0; i < 100; i++) box.add("x", report(`l${i}`));
    expect(box.take("x", 64)).toHaveLength(64);
    expect(box.waiting("x")).toBe(36);
  });
});
