import { describe, expect, it } from "vitest";
import {
  engineFlags,
  FLEET_OPTIONS,
  failure,
  HelpRequested,
  parseFlags,
  setNameTag,
  UsageError,
} from "./flags";

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

describe("parseFlags and failure: --help and unknown options", () => {
  it("names the known option nearest an unknown one", () => {
    expect(() => parseFlags(["--backend", "8"], FLEET_OPTIONS)).toThrow(
      new UsageError("unknown option --backend; did you mean --backends?"),
    );
    expect(() => parseFlags(["--backend=8"], FLEET_OPTIONS)).toThrow("did you mean --backends?");
  });

  it("points to --help, without node's advice on positionals, when no option is near", () => {
    expect(() => parseFlags(["--workload", "x"], FLEET_OPTIONS)).toThrow(
      new UsageError("unknown option --workload (--help lists the options)"),
    );
  });

  it("prints the usage to stdout and ends 0 on HelpRequested; a usage error to stderr, 2", () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = [(s: string) => void err.push(s), (s: string) => void out.push(s)] as const;
    expect(failure(new HelpRequested(), "cmd", "USAGE", ...io)).toBe(0);
    expect([out, err]).toEqual([["USAGE"], []]);
    expect(failure(new UsageError("bad"), "cmd", "USAGE", ...io)).toBe(2);
    expect(err).toEqual(["cmd: bad\n\nUSAGE"]);
  });
});
