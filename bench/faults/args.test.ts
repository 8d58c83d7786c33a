import { describe, expect, it } from "vitest";
import { HelpRequested, UsageError } from "../../sim/flags";
import { parseFaultsArgs } from "./args";

describe("parseFaultsArgs: --help and mistakes", () => {
  it("asks for the usage on --help (printed to stdout, exit 0), not an error", () => {
    expect(() => parseFaultsArgs(["--help"])).toThrow(HelpRequested);
  });

  it("refuses a near miss and a bad value with usage errors", () => {
    expect(() => parseFaultsArgs(["--duraton-s", "60"])).toThrow(
      new UsageError("unknown option --duraton-s; did you mean --duration-s?"),
    );
    expect(() => parseFaultsArgs(["--throttle-share", "2"])).toThrow(UsageError);
  });
});
