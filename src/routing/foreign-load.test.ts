import { describe, expect, it } from "vitest";
import { FleetState } from "./fleet-state";
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
  it("reads each backend's reading through the fleet, with the policy's max age", () => {
    const readings: (EngineSignals | undefined)[] = [
      reading({ running: 7, waiting: 5, ownInflight: 2, sampledAt: 1000 }),
      reading({ running: 7, waiting: 5, ownInflight: 2, sampledAt: 0 }),
      undefined,
    ];
    const fleet = new FleetState(16, 1.25, 1, (i) => readings[i]);
    fleet.backends = ["a", "b", "c"].map((id) => ({ id, weight: 1, kvCacheTokens: 1 }));
    const load = new ForeignLoad({ engineSignalMaxAgeMs: 1500 });
    expect([0, 1, 2].map((i) => load.requests(fleet, i, 1600))).toEqual([10, 0, 0]);
    // A fleet that reads no engine state has no foreign requests.
    const blind = new FleetState(16, 1.25, 1);
    blind.backends = fleet.backends;
    expect(load.requests(blind, 0, 1600)).toBe(0);
  });
});
