import { describe, expect, it } from "vitest";
import { HelpRequested, UsageError } from "../../sim/flags";
import { FAULT_BACKENDS, parseFaultsArgs } from "./args";

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

describe("parseFaultsArgs: --cells", () => {
  it("defaults to one RouterDO and takes an integer within 1..backends, for the soak and the table", () => {
    expect(parseFaultsArgs([]).cells).toBe(1);
    expect(parseFaultsArgs(["--cells", "2"]).cells).toBe(2);
    expect(parseFaultsArgs(["--table", "--cells", String(FAULT_BACKENDS)]).cells).toBe(FAULT_BACKENDS);
  });

  it("refuses 0, more cells than backends, fractions and words with a usage error naming the range", () => {
    for (const bad of ["0", String(FAULT_BACKENDS + 1), "1.5", "two", "", "-1"])
      expect(() => parseFaultsArgs([`--cells=${bad}`]), bad).toThrow(
        new UsageError(`--cells must be an integer within 1..${FAULT_BACKENDS} (the backends), got "${bad}"`),
      );
  });
});
