import { describe, expect, it } from "vitest";
import { engineFlags, UsageError } from "./flags";

describe("engineFlags: --kv-allocation", () => {
  it("leaves the preset as it is when absent or reserve (the default reports stay byte for byte)", () => {
    expect(engineFlags(undefined, undefined).engine).not.toHaveProperty("kvAllocation");
    expect(engineFlags(undefined, undefined, "reserve")).toEqual(engineFlags(undefined, undefined));
  });

  it("sets incremental allocation on every engine", () => {
    expect(engineFlags("qwen3-30b-a3b-h100-vllm", undefined, "incremental").engine?.kvAllocation).toBe(
      "incremental",
    );
  });

  it("refuses anything else with a usage error", () => {
    expect(() => engineFlags(undefined, undefined, "lazy")).toThrow(UsageError);
  });
});
