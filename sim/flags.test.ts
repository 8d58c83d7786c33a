import { describe, expect, it } from "vitest";
import { engineFlags, setNameTag, UsageError } from "./flags";

describe("engineFlags: --kv-allocation", () => {
  it("is incremental, vLLM V1's allocation, when absent, and says so in the engine config", () => {
    expect(engineFlags(undefined, undefined).engine?.kvAllocation).toBe("incremental");
    expect(engineFlags(undefined, undefined, "incremental")).toEqual(engineFlags(undefined, undefined));
  });

  it("keeps reserve selectable, written out so a report tells it from the default", () => {
    expect(engineFlags("qwen3-30b-a3b-h100-vllm", undefined, "reserve").engine?.kvAllocation).toBe("reserve");
  });

  it("refuses anything else with a usage error", () => {
    expect(() => engineFlags(undefined, undefined, "lazy")).toThrow(UsageError);
  });
});

describe("setNameTag: the set and seed in a default report name", () => {
  it("names a synthetic workload's seed always, a trace's only when --seed gave one", () => {
    expect(setNameTag("scoring", false, 3, false)).toBe("-scoring-s3");
    expect(setNameTag("scoring", true, 1, false)).toBe("-scoring");
    // the race's Mooncake runs: one report per seed, not one overwriting the next
    expect(setNameTag("scoring", true, 4, true)).toBe("-scoring-s4");
    expect(setNameTag("tuning", true, 2, true)).toBe("-tuning-s2");
    expect(setNameTag(undefined, true, 4, true)).toBe("");
  });
});
