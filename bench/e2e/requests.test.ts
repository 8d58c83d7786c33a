import { describe, expect, it } from "vitest";
import { clientMaxTokens, MAX_TOKENS_MODELS } from "../../sim/client-max-tokens";
import { prepareWorkload } from "../../sim/prepare";
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

/** 500 requests with true lengths 1..700, one shared system segment. */
const trace = Array.from({ length: 500 }, (_, i) =>
  segmentRequest(
    i * 10,
    [
      { key: "sys", tokens: 32 },
      { key: `t${i}`, tokens: 8 },
    ],
    1 + ((i * 131) % 700),
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
    const window = selectWindow(reqs, { speed: 4, durationMs: 1e9, maxRequests: 10 });
    const items = buildItems(window, "m", 4, [256, undefined, 512, 256, 1024]);
    expect(items.map((i) => i.atMs)).toEqual([0, 125, 250, 500, 875]);
    const body = JSON.parse(items[1]!.body) as Record<string, unknown>;
    expect(body).toMatchObject({
      model: "m",
      stream: true,
      stream_options: { include_usage: true },
    });
    const a = JSON.parse(items[0]!.body).messages;
    const b = JSON.parse(items[1]!.body).messages;
    expect(a.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
    expect(a[0]).toEqual(b[0]);
    expect(a[1]).not.toEqual(b[1]);
  });

  it("sends max_tokens as the client would, and the true length only as min_tokens", () => {
    const window = selectWindow(reqs, { speed: 1, durationMs: 1e9, maxRequests: 10 });
    const items = buildItems(window, "m", 1, [256, undefined, 512, 256, 1024]);
    const bodies = items.map((i) => JSON.parse(i.body) as Record<string, unknown>);
    expect(bodies.map((b) => b.max_tokens)).toEqual([256, undefined, 512, 256, 1024]);
    expect("max_tokens" in bodies[1]!).toBe(false);
    // Output lengths 0..4: the emulator generates at least one token.
    expect(bodies.map((b) => b.min_tokens)).toEqual([1, 1, 2, 3, 4]);
    expect(() => buildItems(window, "m", 1, [256])).toThrow(/maxTokens/);
  });

  it("tells the replay's clients and the simulator's prediction the same max_tokens", () => {
    const window = selectWindow(trace, { speed: 1, durationMs: 1e9, maxRequests: 500 });
    const hints = clientMaxTokens(window, MAX_TOKENS_MODELS.clients, 3);
    const sent = buildItems(window, "m", 1, hints).map(
      (i) => JSON.parse(i.body).max_tokens as number | undefined,
    );
    const predicted = prepareWorkload(
      { name: "w", blockTokens: 16, malformed: 0, requests: window },
      { maxTokens: "clients", seed: 3 },
    ).maxTokens;
    expect(sent).toEqual(predicted);
    // Never the true length where a cap is sent above it.
    expect(sent.filter((m, i) => m !== undefined && m !== window[i]!.outputTokens).length).toBeGreaterThan(
      200,
    );
  });
});
