import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type Report, refill, signalsTable } from "./sim-tables";

const SUMMARY = join(dirname(fileURLToPath(import.meta.url)), "results", "SUMMARY.md");
const README = join(dirname(fileURLToPath(import.meta.url)), "..", "README.md");

describe("bench/sim-tables: SUMMARY.md's simulator tables", () => {
  it("are the reports' own: refilling them from the JSON changes nothing", () => {
    // Fails when a report was re-run and SUMMARY.md not refreshed:
    // npx tsx bench/sim-tables.ts write bench/results/SUMMARY.md
    const text = readFileSync(SUMMARY, "utf8");
    expect(text).toContain("<!-- sim-tables: headline scoring -->");
    expect(refill(text)).toBe(text);
  });

  it("README's headline table is the race of record's, as SUMMARY.md's 'Issue #12's targets now' is", () => {
    // Fails when README.md shows another race first, or after-first-token's reports change without
    // npx tsx bench/sim-tables.ts write README.md
    const readme = readFileSync(README, "utf8");
    const results = readme.slice(readme.indexOf("## Measured results"));
    const marker = "<!-- sim-tables: targets after-first-token -->";
    const summary = readFileSync(SUMMARY, "utf8");
    expect(summary.slice(summary.indexOf("## Issue #12's targets now"))).toContain(marker);
    // The first table of "Measured results" is the marked one, and it is the reports' own.
    expect(results.indexOf(marker)).toBeGreaterThan(0);
    expect(results.indexOf(marker)).toBeLessThan(results.indexOf("\n|"));
    // Biome pads README's tables (npx biome check --write README.md); the figures are what must not move.
    const unpadded = (t: string): string => t.replace(/ {2,}/g, " ").replace(/-{3,}/g, "---");
    expect(unpadded(refill(readme))).toBe(unpadded(readme));
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

/** A synthetic engine-signals report: prefix_aware's p99 `ours`, every other policy's `theirs`. */
function signalsReport(o: {
  seed: number;
  scrapeMs?: number;
  second?: { share: number; backends?: number };
  ours: number;
  theirs?: number;
}): Report {
  const policy = (name: string, p99: number) => ({
    policy: name,
    hitRate: 0.5,
    ttftP50Ms: p99 / 4,
    ttftP99Ms: p99,
    maxLoadRatio: 1.1,
    ...(o.second !== undefined ? { secondClient: { ttftP99Ms: 2 * p99 } } : {}),
  });
  return {
    file: `zipf-s${o.seed}-${o.scrapeMs ?? 0}.json`,
    command: `npm run bench:sim -- --workload zipf --backends 8 --rate 40 --set scoring --seed ${o.seed}`,
    set: `scoring set (seed ${o.seed}; scoring seeds 3–5)`,
    workload: "zipf",
    fleet: {
      backends: 8,
      seed: o.seed,
      preset: "llama-3.1-8b-h100-vllm",
      ...(o.scrapeMs !== undefined ? { scrapeMs: o.scrapeMs } : {}),
      ...(o.second !== undefined ? { secondClient: o.second } : {}),
    },
    oracle: { hitRate: 0.8 },
    promptCount: { pastWindowShare: 0 },
    maxTokens: { model: { name: "clients" } },
    policies: [
      policy("prefix_aware", o.ours),
      ...["least_outstanding", "sglang", "llmd", "dynamo", "sagemaker"].map((p) =>
        policy(p, o.theirs ?? 300),
      ),
    ],
  };
}

describe("bench/sim-tables signals: the scrape off → on, per second client", () => {
  const pinned = { share: 0.3, backends: 2 };
  const pair = (seed: number, off: number, on: number, second?: { share: number; backends?: number }) => [
    signalsReport({ seed, ours: off, ...(second !== undefined ? { second } : {}) }),
    signalsReport({ seed, scrapeMs: 1000, ours: on, ...(second !== undefined ? { second } : {}) }),
  ];

  it("pairs each seed's run without and with the scrape and counts where it helped and where it cost", () => {
    const table = signalsTable([
      ...pair(3, 400, 200, pinned),
      ...pair(4, 200, 200, pinned),
      ...pair(3, 100, 110, { share: 0.3 }),
      ...pair(3, 100, 100),
    ]);
    // Pinned: mean 300 → 200 ms, −33.3%, per seed −50% and ±0.
    expect(table).toContain(
      "| 30% pinned to engines 0–1 | 300 [200–400] ms → 200 [200–200] ms | −33.3% [−50.0%…±0.0%] |",
    );
    expect(table).toContain("| 30% spread over all 8 | 100 ms → 110 ms | +10.0% |");
    // The second client's own requests, and prefix_aware against the best peer (300 ms) off → on.
    expect(table).toContain("| 600 ms → 400 ms | sglang 300 [300–300] ms | ±0.0% → −33.3% |");
    expect(table.indexOf("pinned to engines")).toBeLessThan(table.indexOf("spread over all"));
    expect(table).toContain("- pinned: better on 1 of 1 (−33.3%…−33.3%), worse on 0, within ±1% on 0.");
    expect(table).toContain("- spread: better on 0 of 1, worse on 1 (+10.0%…+10.0%), within ±1% on 0.");
    expect(table).toContain("- none: better on 0 of 1, worse on 0, within ±1% on 1.");
    expect(table).toContain("only prefix_aware reads it");
    // A run with the scrape on may carry only prefix_aware and least_outstanding: the yardsticks are the off run's.
    const lean = signalsReport({ seed: 3, scrapeMs: 1000, ours: 100 });
    const onlyTwo = { ...lean, policies: lean.policies.slice(0, 2) };
    expect(signalsTable([signalsReport({ seed: 3, ours: 100 }), onlyTwo])).toContain(
      "| none | 100 ms → 100 ms | ±0.0% |",
    );
  });

  it("refuses a run without its pair, and names a policy that reads no scrape yet moved", () => {
    expect(() =>
      signalsTable([...pair(3, 400, 200, pinned), signalsReport({ seed: 4, ours: 300, second: pinned })]),
    ).toThrow(/scrape off on seeds \[3,4\], on on \[3\]/);
    const moved = signalsTable([
      signalsReport({ seed: 3, ours: 400, theirs: 300 }),
      signalsReport({ seed: 3, scrapeMs: 1000, ours: 400, theirs: 310 }),
    ]);
    expect(moved).toMatch(
      /A policy that reads no scrape moved between off and on .*least_outstanding, sglang/,
    );
  });

  it("fills engine-signals.md's tables from the reports' JSON: refilling them changes nothing", () => {
    // Fails when the signals runs were re-run and engine-signals.md not refreshed:
    // npx tsx bench/sim-tables.ts write bench/results/engine-signals.md
    const text = readFileSync(join(dirname(SUMMARY), "engine-signals.md"), "utf8");
    expect(text).toContain("<!-- sim-tables: signals -->");
    expect(refill(text)).toBe(text);
  });
});
