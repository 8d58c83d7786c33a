import { describe, expect, it } from "vitest";
import { segmentRequest } from "../../sim/workloads/request";
import { buildItems, selectWindow } from "./requests";

const reqs = [500, 1000, 1500, 2500, 4000].map((t, i) =>
  segmentRequest(
    t,
    [
      { key: "sys", tokens: 32 },
      { key: `q${i}`, tokens: 8 },
    ],
    i,
  ),
);

describe("selectWindow", () => {
  it("rebases to the first arrival and keeps the wall-time window at the given speed", () => {
    const w = selectWindow(reqs, { speed: 2, durationMs: 1000, maxRequests: 100 });
    // Model arrivals 0, 500, 1000, 2000 → wall 0, 250, 500, 1000 (1000 is outside [0, 1000)).
    expect(w.map((r) => r.arrivalMs)).toEqual([0, 500, 1000]);
    expect(selectWindow(reqs, { speed: 1, durationMs: 1e9, maxRequests: 2 })).toHaveLength(2);
  });
});

describe("buildItems", () => {
  it("compresses time by speed and sends streamed chat bodies with usage", () => {
    const items = buildItems(selectWindow(reqs, { speed: 4, durationMs: 1e9, maxRequests: 10 }), "m", 4);
    expect(items.map((i) => i.atMs)).toEqual([0, 125, 250, 500, 875]);
    const body = JSON.parse(items[1]!.body) as Record<string, unknown>;
    expect(body).toMatchObject({
      model: "m",
      max_tokens: 1,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(JSON.parse(items[0]!.body).max_tokens).toBe(1);
    expect(JSON.parse(items[3]!.body).max_tokens).toBe(3);
    const a = JSON.parse(items[0]!.body).messages;
    const b = JSON.parse(items[1]!.body).messages;
    expect(a.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
    expect(a[0]).toEqual(b[0]);
    expect(a[1]).not.toEqual(b[1]);
  });
});
