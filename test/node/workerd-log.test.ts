import { describe, expect, it } from "vitest";
import { workerdLogFilter } from "../worker/workerd-log";

const STACK = "stack: /x/workerd@28a3c60 /x/workerd@3ac7580";

describe("workerd log filter (quiet workerd tests that still fail on a surprise)", () => {
  it("drops disconnections the tests cause on purpose, with their stack lines", () => {
    const f = workerdLogFilter();
    const lines = [
      "exception = rust/worker/ffi.rs:110: disconnected: Connection refused (os error 111)\n",
      `${STACK}\n`,
      "uncaught exception; source = Uncaught (in promise); stack = Error: Network connection lost.\n",
      "uncaught exception; exception = workerd/jsg/value.h:1535: disconnected: jsg.Error: Network connection lost.\n",
      `${STACK}\n`,
      "exception = kj/async-io.c++:763: disconnected: read end of pipe was aborted\n",
      `${STACK}\n`,
    ];
    expect(lines.filter((l) => f.keep(l))).toEqual([]);
    expect(f.unexpected).toEqual([]);
  });

  it("prints and records any other uncaught exception, stack included", () => {
    const f = workerdLogFilter();
    const boom = "uncaught exception; source = Uncaught; stack = Error: boom\n    at test.ts:5:11\n";
    const failed = "uncaught exception; exception = workerd/jsg/value.h:1535: failed: jsg.Error: boom\n";
    expect([boom, failed, `${STACK}\n`].map((l) => f.keep(l))).toEqual([true, true, true]);
    expect(f.unexpected).toEqual([boom.trimEnd(), failed.trimEnd()]);
  });

  it("leaves every other line alone", () => {
    const f = workerdLogFilter();
    expect(f.keep(" ✓  workers  test/worker/routing.test.ts (9 tests)\n")).toBe(true);
    expect(f.keep(`${STACK}\n`)).toBe(true);
    expect(f.unexpected).toEqual([]);
  });
});
