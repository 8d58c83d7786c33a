import { describe, expect, it } from "vitest";
import { type CellsRun, figures, medianRun, pairedRows, tableRows } from "./cells-do-summary";

function run(over: Partial<CellsRun>): CellsRun {
  return {
    mode: "processes",
    cells: 1,
    round: 1,
    callers: 16,
    wallMs: 1000,
    perProcess: [{ decisions: 2000, ms: 990, workerdCpuMs: 500 }],
    idleWorkerdCpuMs: 0,
    clientCpuMs: 20,
    loadAverage: [1.5, 2, 2.5],
    ...over,
  };
}

describe("figures", () => {
  it("rates all processes' decisions over the client's wall clock and gives CPU per decision per process", () => {
    const f = figures(
      run({
        cells: 2,
        wallMs: 800,
        perProcess: [
          { decisions: 2000, ms: 700, workerdCpuMs: 600 },
          { decisions: 2000, ms: 790, workerdCpuMs: 500 },
        ],
        idleWorkerdCpuMs: 20,
      }),
    );
    expect(f.decisions).toBe(4000);
    expect(f.perSecond).toBe(5000);
    expect(f.cpuMsPerDecision).toEqual([0.3, 0.25]);
    expect(f.totalCpuMsPerDecision).toBe(0.275);
    // Idle processes' CPU counts toward cores busy, not toward any decision.
    expect(f.workerdCores).toBe(1.4);
    expect(f.clientCores).toBe(0.025);
  });
});

describe("medianRun", () => {
  it("picks the whole run with the median rate, the lower middle one for an even count", () => {
    const slow = run({ round: 1, wallMs: 2000 });
    const mid = run({ round: 2, wallMs: 1000 });
    const fast = run({ round: 3, wallMs: 500 });
    expect(medianRun([fast, slow, mid]).round).toBe(2);
    expect(medianRun([fast, slow]).round).toBe(1);
    expect(() => medianRun([])).toThrow();
  });
});

describe("tableRows", () => {
  it("states each K against the one-cell median of the same layout, with every round's rate", () => {
    const runs = [
      run({ round: 1, wallMs: 1000 }),
      run({ round: 2, wallMs: 800 }),
      run({
        cells: 2,
        callers: 32,
        wallMs: 1000,
        perProcess: [
          { decisions: 2000, ms: 990, workerdCpuMs: 500 },
          { decisions: 2000, ms: 990, workerdCpuMs: 520 },
        ],
      }),
      // Another layout's runs are not this table's baseline.
      run({ mode: "one-process", wallMs: 100 }),
    ];
    const rows = tableRows(runs, "processes");
    expect(rows).toHaveLength(2);
    // Median of 2000/s and 2500/s is the lower: 2000/s; K = 2 does 4000/s = 2.00 ×.
    expect(rows[0]).toBe(
      "| 1 | 1 | 16 | 2000 | 1000 | **2000** (2000, 2500) | 1.00 | 0.250 | 0.50 | 0.02 | 1.50 |",
    );
    expect(rows[1]).toBe(
      "| 2 | 2 | 32 | 4000 | 1000 | **4000** (4000) | 2.00 | 0.250–0.260 | 1.02 | 0.02 | 1.50 |",
    );
  });
});

describe("pairedRows", () => {
  it("divides each round's processes rate by the same round's one-process rate, K by K", () => {
    const runs = [
      run({ mode: "one-process", round: 1, wallMs: 1000 }),
      run({ mode: "processes", round: 1, wallMs: 1000 }),
      run({ mode: "one-process", round: 2, wallMs: 500 }),
      run({ mode: "processes", round: 2, wallMs: 400 }),
      run({ mode: "one-process", cells: 2, round: 1, wallMs: 1000 }),
      run({ mode: "processes", cells: 2, round: 1, wallMs: 500 }),
      // A processes run whose round has no one-process run is not paired.
      run({ mode: "processes", cells: 2, round: 2, wallMs: 100 }),
    ];
    expect(pairedRows(runs)).toEqual(["| 1 | **1.13** | 1.00, 1.25 |", "| 2 | **2.00** | 2.00 |"]);
  });

  it("has no rows without both layouts", () => {
    expect(pairedRows([run({})])).toEqual([]);
  });
});
