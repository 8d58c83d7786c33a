import { describe, expect, it } from "vitest";
import { ForeignLoad, foreignRequests } from "./foreign-load";
import type { EngineSignals } from "./types";

const reading = (r: Partial<EngineSignals>): EngineSignals => ({
  running: 0,
  waiting: 0,
  kvUsage: 0,
  sampledAt: 0,
  ...r,
});

describe("foreignRequests", () => {
  it("counts what the engine holds beyond our requests, split pro rata into queued and running", () => {
    const f = foreignRequests(reading({ running: 9, waiting: 3, ownInflight: 4 }), 500, 3000);
    expect(f.total).toBe(8);
    expect(f.queued).toBe(2); // 8 · 3/12
    expect(f.running).toBe(6);
  });

  it("is zero for a stale reading, one without ownInflight, or one holding no more than ours", () => {
    const none = { queued: 0, running: 0, total: 0 };
    expect(foreignRequests(reading({ running: 10, ownInflight: 2, sampledAt: 0 }), 3001, 3000)).toEqual(none);
    expect(foreignRequests(reading({ running: 10, ownInflight: 2, sampledAt: 0 }), 3000, 3000).total).toBe(8);
    expect(foreignRequests(reading({ running: 10 }), 0, 3000)).toEqual(none);
    expect(foreignRequests(reading({ running: 2, waiting: 1, ownInflight: 5 }), 0, 3000)).toEqual(none);
    expect(foreignRequests(undefined, 0, 3000)).toEqual(none);
  });
});

describe("ForeignLoad.requests", () => {
  it("counts a reading's foreign requests with the policy's max age", () => {
    const readings: (EngineSignals | undefined)[] = [
      reading({ running: 7, waiting: 5, ownInflight: 2, sampledAt: 1000 }),
      reading({ running: 7, waiting: 5, ownInflight: 2, sampledAt: 0 }),
      undefined,
    ];
    const load = new ForeignLoad({ engineSignalMaxAgeMs: 1500 });
    expect(readings.map((r) => load.requests(r, 1600))).toEqual([10, 0, 0]);
  });
});
