import { describe, expect, it } from "vitest";
import { engineFlags, UsageError } from "./flags";

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
