import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Summary } from "../latency-summary";
import type { Provenance } from "./provenance";
import { markdownSections, mergeFaultsMarkdown, writeFaultsReport } from "./report";
import type { SoakReport } from "./report-soak";
import type { TableReport } from "./report-table";
import { DEFAULT_SOAK, type SoakResult } from "./soak";

function prov(command: string, startedAt: string): Provenance {
  return {
    command,
    startedAt,
    machine: "test machine",
    loadAverageAtStart: [0, 0, 0],
    runtime: "workerd test",
    commit: "abc",
    gatewayCommit: "abc test",
    gatewayDirty: false,
  };
}

function table(startedAt: string, now: string): TableReport {
  const phase = { requests: 1, failed: {}, ttftP50Ms: 1, ttftP99Ms: 1, ttftMaxMs: 1 };
  return {
    provenance: prov("npm run bench:faults -- --table", startedAt),
    baselineS: 10,
    results: [
      {
        id: "cut",
        fault: "a backend cut mid-stream",
        asFiled: "filed",
        now,
        figures: {},
        ordinary: { before: phase, during: phase, after: phase },
        gateway: { usage: {}, leasesAtEnd: 0, leasesZeroAfterMs: null, workerdCpuMsDuring: 1 },
        faultAtS: 10,
        clearAtS: 20,
      } as unknown as TableReport["results"][number],
    ],
  };
}

const summary: Summary = { count: 1, mean: 1, min: 1, p50: 1, p90: 1, p99: 1, max: 1 };

function soak(startedAt: string, requests: number): SoakReport {
  const result = {
    options: DEFAULT_SOAK,
    flapping: "A: killed every 60 s",
    throttling: "B: 429s",
    wallS: 600,
    requests,
    endings: { done: requests, error_event: 0, http_error: 0, broken: 0 },
    byStatus: {},
    byBackend: {},
    byRoute: {},
    retried: 0,
    retryRefused: 0,
    loggedRequests: requests,
    ttftMs: { all: summary, aDown: summary, aUp: summary, retried: summary },
    kills: [],
    throttles: 0,
    emulators: [],
    finalLeases: 0,
    leasesZeroAfterMs: null,
    finalUsage: {},
    memory: { rssMaxMiB: 100, detail: "flat" },
    verdict: { pass: true, criteria: [], endings: {}, excusedCuts: 0 },
    failures: [],
    series: [],
  } as unknown as SoakResult;
  return { provenance: prov("npm run bench:faults", startedAt), result };
}

describe("the faults report: each run rewrites only its own section", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "faults-report-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a soak run keeps the Markdown's table even when the JSON's table part is older", async () => {
    const base = join(dir, "faults");
    // The state the defect left: faults.md holds the 18:33 table, faults.json still the 15:31 one.
    await writeFile(
      `${base}.json`,
      JSON.stringify({
        table: table("2026-12-02T15:31:42Z", "OLD TABLE ROW"),
        soak: soak("2026-12-02T10:00:00Z", 5),
      }),
    );
    await writeFile(
      `${base}.md`,
      mergeFaultsMarkdown(undefined, {
        table: table("2026-12-02T18:33:00Z", "NEW TABLE ROW"),
        soak: soak("2026-12-02T10:00:00Z", 5),
      }),
    );
    const tableBefore = markdownSections(await readFile(`${base}.md`, "utf8")).table;

    await writeFaultsReport(base, { soak: soak("2026-12-02T21:00:00Z", 35817) });

    const md = await readFile(`${base}.md`, "utf8");
    const sections = markdownSections(md);
    expect(sections.table).toBe(tableBefore);
    expect(md).toContain("NEW TABLE ROW");
    expect(md).toContain("2026-12-02T18:33:00Z");
    expect(md).not.toContain("OLD TABLE ROW");
    // The soak section is this run's.
    expect(sections.soak).toContain("2026-12-02T21:00:00Z");
    expect(sections.soak).toContain("35817 requests");
    expect(md).not.toContain("2026-12-02T10:00:00Z");
    // The table comes first, then the soak.
    expect(md.indexOf("## The fault table")).toBeLessThan(md.indexOf("## Fault soak"));
  });

  it("a table run keeps the Markdown's soak section as written, even one the renderer would not produce", async () => {
    const base = join(dir, "faults");
    const handWritten =
      "## Fault soak: PASS\n\nReproduce:\n\n```sh\nnpm run bench:faults\n```\n\n### Requests\n\nkept.";
    await writeFile(`${base}.md`, `# Faults\n\n${handWritten}\n`);
    await writeFile(`${base}.json`, JSON.stringify({ soak: soak("2026-12-01T00:00:00Z", 7) }));

    const merged = await writeFaultsReport(base, { table: table("2026-12-03T08:00:00Z", "THIS RUN") });

    const md = await readFile(`${base}.md`, "utf8");
    expect(markdownSections(md).soak).toBe(handWritten);
    expect(markdownSections(md).table).toContain("THIS RUN");
    // The JSON replaces only this run's part.
    expect(merged.soak?.provenance.startedAt).toBe("2026-12-01T00:00:00Z");
    const json = JSON.parse(await readFile(`${base}.json`, "utf8"));
    expect(json.table.provenance.startedAt).toBe("2026-12-03T08:00:00Z");
    expect(json.soak.provenance.startedAt).toBe("2026-12-01T00:00:00Z");
  });

  it("a first run writes only its own section", async () => {
    const base = join(dir, "sub", "faults");
    await writeFaultsReport(base, { table: table("2026-12-03T08:00:00Z", "FIRST") });
    const md = await readFile(`${base}.md`, "utf8");
    expect(Object.keys(markdownSections(md))).toEqual(["table"]);
  });

  it("refuses a Markdown with a part's heading twice rather than guess which to keep", () => {
    expect(() => markdownSections("## Fault soak: PASS\n\na\n\n## Fault soak: FAIL\n\nb\n")).toThrow(/two/);
  });

  it("a heading inside a code fence is not a section", () => {
    const md = "## Fault soak: PASS\n\n```\n## The fault table, quoted\n```\n";
    expect(Object.keys(markdownSections(md))).toEqual(["soak"]);
  });

  it("names the RouterDO cells in both parts when the pool was split, and says nothing of them for one RouterDO", () => {
    const one = mergeFaultsMarkdown(undefined, {
      table: table("2026-12-03T08:00:00Z", "x"),
      soak: soak("2026-12-03T08:00:00Z", 5),
    });
    expect(one).not.toMatch(/cells/);
    const two = mergeFaultsMarkdown(undefined, {
      table: { ...table("2026-12-03T08:00:00Z", "x"), cells: 2 },
      soak: { ...soak("2026-12-03T08:00:00Z", 5), cells: 2 },
    });
    const sections = markdownSections(two);
    for (const part of ["table", "soak"] as const)
      expect(sections[part]).toContain("The pool split into 2 RouterDO cells (ROUTER_CELLS=2)");
  });
});
