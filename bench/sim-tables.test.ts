import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { refill } from "./sim-tables";

const SUMMARY = join(dirname(fileURLToPath(import.meta.url)), "results", "SUMMARY.md");

describe("bench/sim-tables: SUMMARY.md's simulator tables", () => {
  it("are the reports' own: refilling them from the JSON changes nothing", () => {
    // Fails when a report was re-run and SUMMARY.md not refreshed:
    // npx tsx bench/sim-tables.ts write bench/results/SUMMARY.md
    const text = readFileSync(SUMMARY, "utf8");
    expect(text).toContain("<!-- sim-tables: headline scoring -->");
    expect(refill(text)).toBe(text);
  });

  it("has an 'After issue #12' section whose runs are the baseline's race with only prefix_aware changed", () => {
    const text = readFileSync(SUMMARY, "utf8");
    const after = text.slice(text.indexOf("## After issue #12"));
    expect(text).toContain("## After issue #12");
    for (const marker of [
      "after scoring after-issue-12",
      "headline scoring after-issue-12",
      "peers scoring after-issue-12",
      "targets after-issue-12",
      "commands scoring after-issue-12",
    ])
      expect(after).toContain(`<!-- sim-tables: ${marker} -->`);
    // The peers' figures of the new runs must be the baseline's, run for run, or the comparison mixes races.
    expect(refill("<!-- sim-tables: after scoring after-issue-12 -->\n<!-- /sim-tables -->")).toContain(
      "only prefix_aware changed",
    );
  });

  it("refuses a folder that holds no reports", () => {
    expect(() =>
      refill("<!-- sim-tables: headline scoring no-such-folder -->\n<!-- /sim-tables -->"),
    ).toThrow();
  });

  it("replaces a marked block's old content with its view, and refuses a view it does not have", () => {
    const filled = refill("before\n<!-- sim-tables: peers scoring -->\nstale\n<!-- /sim-tables -->\nafter\n");
    expect(filled).not.toContain("stale");
    expect(filled).toMatch(
      /^before\n<!-- sim-tables: peers scoring -->\n\n\| workload \| prefix_aware p99 \|/,
    );
    expect(filled).toMatch(/- dynamo: prefix_aware behind on \d+ of \d+/);
    expect(filled.endsWith("\n<!-- /sim-tables -->\nafter\n")).toBe(true);
    expect(() => refill("<!-- sim-tables: nonsense -->\n<!-- /sim-tables -->")).toThrow(/no view nonsense/);
  });
});
