import { describe, expect, it } from "vitest";
import { burst, burstMooncake, burstMooncakeRecords } from "./burst";
import { loadWorkload } from "./index";
import { parseTrace } from "./trace-file";
import type { WorkloadRequest } from "./types";

function prefixKey(r: WorkloadRequest): string {
  if (r.prompt.kind !== "segments") throw new Error("expected segments");
  return r.prompt.segments[0]!.key;
}

describe("burst", () => {
  const w = burst({ rate: 16, seed: 1 });

  it("is 64 groups of 16 requests sharing a fresh 4096-token prefix, 128-token questions, 256 out", () => {
    expect(w.requests).toHaveLength(1024);
    expect(w.blockTokens).toBe(16);
    const groups = new Map<string, WorkloadRequest[]>();
    for (const r of w.requests) {
      expect(r.promptTokens).toBe(4096 + 128);
      expect(r.outputTokens).toBe(256);
      groups.set(prefixKey(r), [...(groups.get(prefixKey(r)) ?? []), r]);
    }
    expect(groups.size).toBe(64);
    for (const g of groups.values()) {
      expect(g).toHaveLength(16);
      const t = g.map((r) => r.arrivalMs);
      expect(Math.max(...t) - Math.min(...t)).toBeLessThan(100);
    }
  });

  it("arrives sorted, bursts spread at rate ÷ 16 groups/s, deterministic for a seed", () => {
    expect(w.requests.every((r, i) => i === 0 || r.arrivalMs >= w.requests[i - 1]!.arrivalMs)).toBe(true);
    const span = w.requests.at(-1)!.arrivalMs - w.requests[0]!.arrivalMs;
    // 64 groups at 1 group/s: ~64 s (Poisson: within a generous band).
    expect(span).toBeGreaterThan(40_000);
    expect(span).toBeLessThan(90_000);
    const again = burst({ rate: 16, seed: 1 });
    expect(again.requests.map((r) => [r.arrivalMs, prefixKey(r)])).toEqual(
      w.requests.map((r) => [r.arrivalMs, prefixKey(r)]),
    );
    expect(burst({ rate: 16, seed: 2 }).requests[0]!.arrivalMs).not.toBe(w.requests[0]!.arrivalMs);
  });

  it("in the Mooncake format: the same arrivals, 512-token hash-id blocks, 8 shared per group", async () => {
    const records = burstMooncakeRecords({ rate: 16, seed: 1 });
    const m = burstMooncake({ rate: 16, seed: 1 });
    expect(m.blockTokens).toBe(512);
    expect(m.requests.map((r) => r.arrivalMs)).toEqual(w.requests.map((r) => r.arrivalMs));
    expect(records[0]!.hash_ids).toHaveLength(9);
    const sameGroup = records.filter((r) => r.hash_ids[0] === records[0]!.hash_ids[0]);
    expect(sameGroup).toHaveLength(16);
    expect(new Set(sameGroup.map((r) => r.hash_ids.slice(0, 8).join())).size).toBe(1);
    expect(new Set(sameGroup.map((r) => r.hash_ids[8])).size).toBe(16);
    // A file of these lines reads back as the same requests.
    const trace = await parseTrace(records.map((r) => JSON.stringify(r)).join("\n"));
    expect(trace.malformed).toBe(0);
    expect(trace.blockTokens).toBe(512);
    expect(trace.requests.map((r) => r.promptTokens)).toEqual(m.requests.map((r) => r.promptTokens));
  });

  it("is registered by name; --requests picks whole groups", async () => {
    expect((await loadWorkload("burst", { rate: 16, seed: 1, requests: 160 })).requests).toHaveLength(160);
    expect((await loadWorkload("burst-mooncake", { rate: 16, seed: 1 })).name).toBe("burst-mooncake");
    expect(() => burstMooncakeRecords({ rate: 16, seed: 1, prefixTokens: 4000 })).toThrow(/multiple of 512/);
  });
});
