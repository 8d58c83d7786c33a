import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeSet, loadSetData, seedOfSet, setOf, traceHalf } from "./eval-sets";
import { segmentRequest } from "./workloads/request";
import type { Workload } from "./workloads/types";

const trace = (of: number, from: number, to: number) => ({ kind: "trace", from, to, of }) as const;
const synthetic = (workload: string, seed: number) => ({ kind: "synthetic", workload, seed }) as const;

describe("tuning and scoring sets", () => {
  it("place a synthetic run by its seed, and new workloads in scoring only", () => {
    expect(setOf(synthetic("zipf", 1))).toBe("tuning");
    expect(setOf(synthetic("zipf", 2))).toBe("tuning");
    expect(setOf(synthetic("zipf", 4))).toBe("scoring");
    expect(setOf(synthetic("zipf", 7))).toBeUndefined();
    expect(setOf(synthetic("burst", 1))).toBeUndefined();
    expect(setOf(synthetic("burst", 3))).toBe("scoring");
    expect(describeSet(synthetic("burst", 1))).toMatch(/burst is scored only/);
  });

  it("place a trace run by the half its requests come from", () => {
    expect(setOf(trace(12031, 0, 6015))).toBe("tuning");
    expect(setOf(trace(12031, 0, 100))).toBe("tuning");
    expect(setOf(trace(12031, 6015, 12031))).toBe("scoring");
    expect(setOf(trace(12031, 0, 12031))).toBeUndefined();
    expect(describeSet(trace(12031, 0, 12031))).toMatch(/^neither set: requests 1–12031 of 12031 spans/);
    expect(describeSet(trace(12031, 6015, 12031))).toBe(
      "scoring set (the trace's second half: requests 6016–12031 of 12031, arrivals rebased)",
    );
  });

  it("check a seed against the set, defaulting to its first", () => {
    expect(seedOfSet("tuning", "multi-turn", undefined)).toBe(1);
    expect(seedOfSet("scoring", "multi-turn", undefined)).toBe(3);
    expect(seedOfSet("scoring", "burst", 5)).toBe(5);
    expect(() => seedOfSet("tuning", "multi-turn", 3)).toThrow(/seed 3 is not in the tuning set/);
    expect(() => seedOfSet("tuning", "burst", 1)).toThrow(/not in the tuning set/);
  });

  it("split a trace into disjoint halves, the second rebased to start at 0", () => {
    const w: Workload = {
      name: "t",
      blockTokens: 16,
      malformed: 0,
      requests: [0, 10, 20, 30, 40].map((t, i) => segmentRequest(t, [{ key: `k${i}`, tokens: 16 }], 1)),
    };
    const first = traceHalf(w, "first");
    const second = traceHalf(w, "second");
    expect(first.workload.requests.map((r) => r.arrivalMs)).toEqual([0, 10]);
    expect(second.workload.requests.map((r) => r.arrivalMs)).toEqual([0, 10, 20]);
    expect(first.run).toEqual(trace(5, 0, 2));
    expect(second.run).toEqual(trace(5, 2, 5));
    expect(setOf(first.run)).toBe("tuning");
    expect(setOf(second.run)).toBe("scoring");
  });

  it("load a set's half of a trace file, then cap it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sets-"));
    const path = join(dir, "t.jsonl");
    const line = (i: number) =>
      JSON.stringify({ timestamp: 1000 * i, input_length: 600, output_length: 5, hash_ids: [0, 100 + i] });
    writeFileSync(path, Array.from({ length: 11 }, (_, i) => line(i)).join("\n"));
    const args = { rate: 1, seed: 1, speed: 1 };
    const whole = await loadSetData(`file:${path}`, args);
    expect(whole.run).toEqual(trace(11, 0, 11));
    const scoring = await loadSetData(`file:${path}`, { ...args, set: "scoring" });
    expect(scoring.run).toEqual(trace(11, 5, 11));
    expect(scoring.workload.requests[0]!.arrivalMs).toBe(0);
    const capped = await loadSetData(`file:${path}`, { ...args, set: "scoring", requests: 2 });
    expect(capped.run).toEqual(trace(11, 5, 7));
    expect(capped.workload.requests).toHaveLength(2);
    const gsp = await loadSetData("generated-shared-prefix", { ...args, seed: 4, rate: 10 });
    expect(setOf(gsp.run)).toBe("scoring");
  });
});
