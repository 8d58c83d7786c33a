import { describe, expect, it } from "vitest";
import type { RequestRecord } from "./clients";
import type { MemoryVerdict } from "./flatness";
import { inFlightAtKill, judgeSoak } from "./soak-verdict";

const flat = { pass: true, detail: "flat" } as MemoryVerdict;

function rec(id: string, ending: RequestRecord["ending"], backend: string, startMs: number, endMs: number) {
  return { id, startMs, endMs, status: ending === "http_error" ? 429 : 200, ending, backend };
}

describe("judgeSoak", () => {
  const kills = [{ backend: "emu-1", atMs: 1000 }];

  it("excuses only error-event endings of streams in flight on the killed backend at the kill", () => {
    expect(inFlightAtKill(rec("a", "error_event", "emu-1", 900, 1001), kills)).toBe(true);
    expect(inFlightAtKill(rec("b", "error_event", "emu-2", 900, 1001), kills)).toBe(false);
    expect(inFlightAtKill(rec("c", "error_event", "emu-1", 1001, 1200), kills)).toBe(false);
    const v = judgeSoak({
      records: [
        rec("a", "done", "emu-2", 0, 100),
        rec("b", "error_event", "emu-1", 900, 1001),
        rec("c", "error_event", "emu-1", 1001, 1200),
      ],
      kills,
      throttles: 3,
      finalLeases: 0,
      memory: flat,
    });
    expect(v.excusedCuts).toBe(1);
    expect(v.failures.map((r) => r.id)).toEqual(["c"]);
    expect(v.pass).toBe(false);
  });

  it("a broken stream fails even when it was cut by a kill", () => {
    const v = judgeSoak({
      records: [rec("a", "broken", "emu-1", 900, 1001)],
      kills,
      throttles: 1,
      finalLeases: 0,
      memory: flat,
    });
    expect(v.criteria.find((c) => c.name.startsWith("no broken"))?.pass).toBe(false);
    expect(v.pass).toBe(false);
  });

  it("passes a clean run, and fails one with a lease left or without faults", () => {
    const records = [rec("a", "done", "emu-2", 0, 100), rec("b", "error_event", "emu-1", 900, 1001)];
    const base = { records, kills, throttles: 2, finalLeases: 0, memory: flat };
    expect(judgeSoak(base).pass).toBe(true);
    expect(judgeSoak({ ...base, finalLeases: 1 }).pass).toBe(false);
    expect(judgeSoak({ ...base, finalLeases: undefined }).pass).toBe(false);
    expect(judgeSoak({ ...base, kills: [], records: records.slice(0, 1) }).pass).toBe(false);
  });
});
