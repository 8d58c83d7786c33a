import { describe, expect, it } from "vitest";
import { cellSlots, headroomSlots, KeyDemand, shareVerdict } from "./key-share";

/** Admits key x into a cell, as the RouterDO does, and returns the verdict. */
function admits(input: {
  slots: number;
  inflight: number;
  held: number;
  contenders: number;
  percent?: number;
}) {
  return shareVerdict({ ...input, headroom: headroomSlots(input.slots, input.percent ?? 10) }).admit;
}

describe("headroomSlots", () => {
  it.each([
    [4, 10, 1],
    [10, 10, 1],
    [64, 10, 7],
    [8, 50, 4],
    [8, 0, 0],
    [0, 10, 0],
  ])("%d slots at %d%% keep %d", (slots, percent, want) => {
    expect(headroomSlots(slots, percent)).toBe(want);
  });
});

describe("shareVerdict", () => {
  it("work-conserving: a key alone takes every slot, the last one too", () => {
    for (let held = 0; held < 8; held++)
      expect(admits({ slots: 8, inflight: held, held, contenders: 1 })).toBe(true);
  });

  it("a key holding nothing is admitted while another key holds all but the headroom", () => {
    expect(admits({ slots: 8, inflight: 7, held: 0, contenders: 2 })).toBe(true);
  });

  it("a key above its share does not take the headroom while another key contends", () => {
    // 8 slots, 2 keys: share 4. A holds 7, one free: that one is B's.
    const v = shareVerdict({ slots: 8, inflight: 7, held: 7, contenders: 2, headroom: 1 });
    expect(v).toEqual({ admit: false, reason: "over_share", share: 4 });
    // With two free it may take one, leaving the headroom.
    expect(admits({ slots: 8, inflight: 6, held: 6, contenders: 2 })).toBe(true);
  });

  it("a key below its share is admitted into the last free slot; one above it is not", () => {
    // 8 slots, 2 keys: A 5, B 2; one free.
    expect(admits({ slots: 8, inflight: 7, held: 2, contenders: 2 })).toBe(true);
    expect(admits({ slots: 8, inflight: 7, held: 5, contenders: 2 })).toBe(false);
  });

  it("at exactly its share a key is not below it", () => {
    expect(admits({ slots: 8, inflight: 7, held: 4, contenders: 2 })).toBe(false);
  });

  it("off (headroom 0): first come take every slot, as without it", () => {
    expect(admits({ slots: 8, inflight: 7, held: 7, contenders: 3, percent: 0 })).toBe(true);
  });

  it("shares shrink with more contenders: 3 keys on 9 slots, a key at 3 is at its share", () => {
    expect(admits({ slots: 9, inflight: 8, held: 3, contenders: 3 })).toBe(false);
    expect(admits({ slots: 9, inflight: 8, held: 2, contenders: 3 })).toBe(true);
  });
});

describe("KeyDemand", () => {
  it("counts the asking key, the holders and those that asked within the window, once each", () => {
    const d = new KeyDemand(1000, 100);
    d.asked("a", 0);
    d.asked("b", 500);
    expect(d.contenders("a", 600, [])).toBe(2);
    expect(d.contenders("c", 600, ["a", "d"])).toBe(4);
  });

  it("forgets a key whose window has passed, unless it holds a slot", () => {
    const d = new KeyDemand(1000, 100);
    d.asked("b", 0);
    expect(d.contenders("a", 1001, [])).toBe(1);
    d.asked("b", 0);
    expect(d.contenders("a", 1001, ["b"])).toBe(2);
  });

  it("a key asking again is renewed, and memory stays bounded: the oldest is forgotten first", () => {
    const d = new KeyDemand(10_000, 2);
    d.asked("a", 0);
    d.asked("b", 1);
    d.asked("a", 2);
    d.asked("c", 3);
    // b was the oldest when c came (a asked again after it): a and c are left.
    expect(d.contenders("x", 4, [])).toBe(3);
    expect(d.contenders("a", 4, [])).toBe(2);
  });
});

describe("cellSlots", () => {
  const inflight = (m: Record<string, number>) => (id: string) => m[id] ?? 0;

  it("sums the usable backends' bounds and their use (a backend past its bound counts its bound)", () => {
    const backends = [{ id: "a" }, { id: "b", maxInflight: 4 }, { id: "c" }];
    expect(cellSlots(backends, 2, (id) => id !== "c", inflight({ a: 3, b: 1, c: 2 }))).toEqual({
      slots: 6,
      inflight: 3,
    });
  });

  it("undefined when a usable backend is unbounded: the bound never binds", () => {
    expect(
      cellSlots(
        [{ id: "a" }, { id: "b", maxInflight: 0 }],
        2,
        () => true,
        () => 0,
      ),
    ).toBeUndefined();
    expect(
      cellSlots(
        [{ id: "a" }, { id: "b", maxInflight: 0 }],
        2,
        (id) => id === "a",
        () => 0,
      ),
    ).toEqual({
      slots: 2,
      inflight: 0,
    });
  });
});
