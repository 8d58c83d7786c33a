import { describe, expect, it } from "vitest";
import { progressBar } from "./progress";

describe("progressBar", () => {
  it("draws in place on a terminal, at most once per interval, and erases itself", () => {
    const writes: string[] = [];
    let now = 0;
    const p = progressBar({ isTTY: true, columns: 60, write: (s) => writes.push(s) }, () => now, 100);
    p.update(0.5, "reading");
    p.update(0.6, "reading"); // too soon
    now = 150;
    p.update(undefined, "simulating");
    p.done();
    expect(writes).toEqual([
      `\r\x1b[2K[${"#".repeat(12)}${"-".repeat(12)}]  50% reading`,
      "\r\x1b[2Ksimulating",
      "\r\x1b[2K",
    ]);
  });

  it("writes nothing off a terminal", () => {
    const writes: string[] = [];
    const p = progressBar({ isTTY: false, write: (s) => writes.push(s) });
    p.update(0.5, "reading");
    p.done();
    expect(writes).toEqual([]);
  });
});
