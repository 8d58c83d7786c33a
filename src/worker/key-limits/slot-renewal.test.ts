import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SlotRenewer } from "./slot-renewal";

const PERIOD = 1000;

describe("SlotRenewer", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("sends nothing for a request that ends before its first renewal is due, and leaves no timer", async () => {
    const r = new SlotRenewer(PERIOD);
    const send = vi.fn(async () => {});
    const stop = r.hold("k", "s1", send);
    await vi.advanceTimersByTimeAsync(PERIOD - 1);
    stop();
    await vi.advanceTimersByTimeAsync(10 * PERIOD);
    expect(send).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("renews a long hold every period until it stops", async () => {
    const r = new SlotRenewer(PERIOD);
    const send = vi.fn(async (_ids: readonly string[]) => {});
    const stop = r.hold("k", "s1", send);
    await vi.advanceTimersByTimeAsync(3 * PERIOD);
    expect(send).toHaveBeenCalledTimes(3);
    expect(send).toHaveBeenLastCalledWith(["s1"]);
    stop();
    await vi.advanceTimersByTimeAsync(5 * PERIOD);
    expect(send).toHaveBeenCalledTimes(3);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("many streams of one key cost one call per period, naming all of them; another key has its own", async () => {
    const r = new SlotRenewer(PERIOD);
    const sends: { key: string; ids: readonly string[] }[] = [];
    const sender = (key: string) => async (ids: readonly string[]) => {
      sends.push({ key, ids: [...ids] });
    };
    const stops: (() => void)[] = [];
    for (let i = 0; i < 10; i++) {
      stops.push(r.hold("k", `s${i}`, sender("k")));
      await vi.advanceTimersByTimeAsync(PERIOD / 20);
    }
    stops.push(r.hold("other", "o1", sender("other")));
    await vi.advanceTimersByTimeAsync(4 * PERIOD);
    const k = sends.filter((s) => s.key === "k");
    // 4.5 periods since the first hold: renewals at 1, 2, 3, 4 periods (and never one per stream).
    expect(k.length).toBe(4);
    for (const s of k)
      expect([...s.ids].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `s${i}`).sort());
    expect(sends.filter((s) => s.key === "other").length).toBe(4);
    // The first stream ends: the others keep the key renewed, now without it.
    stops[0]!();
    await vi.advanceTimersByTimeAsync(2 * PERIOD);
    const after = sends.filter((s) => s.key === "k").slice(4);
    expect(after.length).toBe(2);
    for (const s of after) expect(s.ids).not.toContain("s0");
    for (const stop of stops) stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("every held slot is named in a call at most 2 periods apart, whatever the streams' phases", async () => {
    const r = new SlotRenewer(PERIOD);
    const lastNamed = new Map<string, number>();
    let worst = 0;
    const send = async (ids: readonly string[]) => {
      const now = Date.now();
      for (const id of ids) lastNamed.set(id, now);
    };
    const start = Date.now();
    const stops = new Map<string, () => void>();
    // Streams come and go at odd times.
    for (let t = 0; t < 40; t++) {
      const id = `s${t}`;
      stops.set(id, r.hold("k", id, send));
      lastNamed.set(id, Date.now());
      if (t % 3 === 0) {
        const victim = `s${t - 2}`;
        stops.get(victim)?.();
        stops.delete(victim);
        lastNamed.delete(victim);
      }
      await vi.advanceTimersByTimeAsync(PERIOD * 0.37);
      for (const at of lastNamed.values()) worst = Math.max(worst, Date.now() - at);
    }
    expect(Date.now() - start).toBeGreaterThan(10 * PERIOD);
    expect(worst).toBeLessThanOrEqual(2 * PERIOD);
    for (const stop of stops.values()) stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a failed renewal is swallowed (the slot keeps its deadline) and tried again next period", async () => {
    const r = new SlotRenewer(PERIOD);
    const send = vi.fn(async () => {
      throw new Error("unreachable");
    });
    const stop = r.hold("k", "s1", send);
    await vi.advanceTimersByTimeAsync(2 * PERIOD);
    expect(send).toHaveBeenCalledTimes(2);
    stop();
  });

  it("stop is idempotent", () => {
    const r = new SlotRenewer(PERIOD);
    const stop = r.hold("k", "s1", async () => {});
    stop();
    stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("refuses a period that is not a positive integer", () => {
    expect(() => new SlotRenewer(0)).toThrow(/period/);
    expect(() => new SlotRenewer(1.5)).toThrow(/period/);
  });

  it("a holder that died without stopping (its timer gone) is named no more after 2 periods: its slot lapses", async () => {
    // The runtime's timers, but one request's can be killed as a dead request's dies with it.
    const killed = new Set<unknown>();
    const handles: unknown[] = [];
    const r = new SlotRenewer(PERIOD, {
      set: (fn, ms) => {
        const h = setInterval(() => {
          if (!killed.has(h)) fn();
        }, ms);
        handles.push(h);
        return h;
      },
      clear: (h) => clearInterval(h as ReturnType<typeof setInterval>),
    });
    const sends: string[][] = [];
    const send = async (ids: readonly string[]) => {
      sends.push([...ids]);
    };
    r.hold("k", "dead", send);
    const stopLive = r.hold("k", "live", send);
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(sends.at(-1)!.sort()).toEqual(["dead", "live"]);
    killed.add(handles[0]); // "dead"'s request is gone; nobody called its stop
    await vi.advanceTimersByTimeAsync(3 * PERIOD);
    // Named while its last tick is recent, then never again; the live one every period.
    expect(sends.at(-1)).toEqual(["live"]);
    expect(sends.filter((ids) => ids.includes("live")).length).toBe(sends.length);
    stopLive();
  });
});
