import { describe, expect, it } from "vitest";
import { describePoolState, poolStateOf } from "./pool-counters";

const counters = { retried: 1, retriesRefused: 0, ejections: 2, restorations: 1, expired: 3, observed: 4 };

describe("poolStateOf", () => {
  it("reads the pool's counters and the backends out of rotation", () => {
    const body = {
      pools: {
        m: {
          ok: true,
          counters,
          backends: [
            { id: "emu-1", healthy: true },
            { id: "emu-2", healthy: false },
          ],
        },
      },
    };
    const s = poolStateOf(body, "m");
    expect(s).toEqual({
      ejections: 2,
      restorations: 1,
      expired: 3,
      observed: 4,
      retried: 1,
      outOfRotation: ["emu-2"],
    });
    expect(describePoolState(s)).toContain("out of rotation at the end: emu-2");
    expect(s.learnedPrefillTokensPerSec).toBeUndefined();
  });

  it("reads the prefill rate the policy learned, as the mean over the backends", () => {
    const backends = [
      { id: "emu-1", healthy: true, prefillTokensPerSec: 30_000 },
      { id: "emu-2", healthy: true, prefillTokensPerSec: 40_000 },
    ];
    const s = poolStateOf({ pools: { m: { ok: true, counters, backends } } }, "m");
    expect(s.learnedPrefillTokensPerSec).toBe(35_000);
    expect(describePoolState(s)).toContain("learned prefill rate at the end 35000 tok/s (wall)");
    expect(() =>
      poolStateOf(
        {
          pools: {
            m: { ok: true, counters, backends: [{ id: "e", healthy: true, prefillTokensPerSec: "1" }] },
          },
        },
        "m",
      ),
    ).toThrow(/prefillTokensPerSec/);
  });

  it("throws on a pool the RouterDO could not report, or another model", () => {
    expect(() => poolStateOf({ pools: { m: { ok: false, error: "timeout" } } }, "m")).toThrow(
      /no readable pool/,
    );
    expect(() => poolStateOf({ pools: { m: { ok: true, counters, backends: [] } } }, "x")).toThrow(/model x/);
    expect(() =>
      poolStateOf(
        { pools: { m: { ok: true, counters: { ...counters, ejections: "2" }, backends: [] } } },
        "m",
      ),
    ).toThrow(/ejections/);
  });
});
