import { describe, expect, it } from "vitest";
import { HelpRequested, UsageError } from "../../sim/flags";
import { parseE2eArgs } from "./args";

const base = ["--workload", "generated-shared-prefix", "--rate", "8", "--backends", "4", "--duration", "30"];

describe("parseE2eArgs: the scrape and the second client", () => {
  it("off and none by default", () => {
    const a = parseE2eArgs(base);
    expect(a.scrapeMs).toBe(0);
    expect(a.secondClient).toBeUndefined();
  });

  it("takes ENGINE_SCRAPE_MS's bounds and a SHARE[:K] second client", () => {
    const a = parseE2eArgs([...base, "--scrape-ms", "1000", "--second-client", "0.3:1"]);
    expect(a.scrapeMs).toBe(1000);
    expect(a.secondClient).toEqual({ share: 0.3, backends: 1 });
  });

  it.each([
    ["--scrape-ms", "50"],
    ["--scrape-ms", "-1"],
    ["--second-client", "1.5"],
  ])("refuses %s %s", (flag, value) => {
    expect(() => parseE2eArgs([...base, flag, value])).toThrow(flag);
  });
});

describe("parseE2eArgs: --help and mistakes", () => {
  it("asks for the usage on --help (printed to stdout, exit 0), not an error", () => {
    expect(() => parseE2eArgs(["--help"])).toThrow(HelpRequested);
    expect(() => parseE2eArgs(["-h"])).toThrow(HelpRequested);
  });

  it("refuses a near miss with a usage error naming the option meant", () => {
    expect(() => parseE2eArgs(["--backend", "4"])).toThrow(
      new UsageError("unknown option --backend; did you mean --backends?"),
    );
    expect(() => parseE2eArgs(["--rate", "8", "--duration", "30"])).toThrow(UsageError);
  });
});
