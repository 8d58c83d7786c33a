import { describe, expect, it } from "vitest";
import {
  bestPeer,
  type Figures,
  figures,
  groupOf,
  groups,
  groupTable,
  peerFileOf,
  type Row,
  reportTable,
} from "./compare-folders";
import type { Report } from "./sim-tables";

const fig = (p99: number, load = 1, hit = 0.5): Figures => ({
  p50: p99 / 4,
  p99,
  hit,
  ofOracle: hit / 0.8,
  e2eP99: 10 * p99,
  load,
});
const row = (name: string, base: Figures, now: Figures, peers: Record<string, number> = {}): Row => ({
  name,
  base,
  now,
  peers: new Map(Object.entries(peers)),
});
/** The cells of a table's data rows, by their first cell. */
const cells = (table: string) =>
  new Map(
    table
      .split("\n")
      .slice(2)
      .map((l) => l.split("|").map((c) => c.trim()))
      .map((c) => [c[1]!, c.slice(2, -1)] as const),
  );

describe("bench/compare-folders: prefix_aware between two folders of reports", () => {
  it("groups a report by its name without the seed, wherever the seed stands", () => {
    expect(groupOf("zipf-8b-r40-tuning-s1.json")).toBe("zipf-8b-r40-tuning");
    expect(groupOf("zipf-8b-r65-tuning-s2-qwen3-30b-a3b-h100-vllm.json")).toBe(
      "zipf-8b-r65-tuning-qwen3-30b-a3b-h100-vllm",
    );
    // No seed (Mooncake: one trace half per set): the group is the report; `-scoring` is no seed.
    expect(groupOf("mooncake-8b-x2.45-scoring.json")).toBe("mooncake-8b-x2.45-scoring");
    expect(groupOf("burst-8b-r28-scrape1000-scoring-s3.json")).toBe("burst-8b-r28-scrape1000-scoring");
    const rows = ["a-tuning-s1.json", "a-tuning-s2.json", "b-tuning.json"].map((n) => row(n, fig(1), fig(1)));
    expect([...groups(rows)].map(([g, rs]) => [g, rs.length])).toEqual([
      ["a-tuning", 2],
      ["b-tuning", 1],
    ]);
  });

  it("finds the peers' report of a scraped run under its name without -scrape<MS>", () => {
    expect(peerFileOf("mooncake-8b-x2-scrape1000-tuning-qwen3-30b-a3b-h100-vllm.json")).toBe(
      "mooncake-8b-x2-tuning-qwen3-30b-a3b-h100-vllm.json",
    );
    expect(peerFileOf("mooncake-16b-x4.1-sc0.3of4-scrape250-scoring.json")).toBe(
      "mooncake-16b-x4.1-sc0.3of4-scoring.json",
    );
    expect(peerFileOf("zipf-8b-r40-tuning-s1.json")).toBe("zipf-8b-r40-tuning-s1.json");
  });

  it("takes the best peer by the lowest mean p99 over the seeds, not the best single seed", () => {
    const rs = [
      {
        peers: new Map([
          ["sglang", 100],
          ["dynamo", 130],
        ]),
      },
      {
        peers: new Map([
          ["sglang", 200],
          ["dynamo", 140],
        ]),
      },
    ];
    expect(bestPeer(rs)).toEqual({ peer: "dynamo", p99: 135 });
    expect(bestPeer([rs[0]!])).toEqual({ peer: "sglang", p99: 100 });
    // A report whose peers' run is missing counts for none.
    expect(bestPeer([{ peers: new Map() }, rs[1]!])).toEqual({ peer: "dynamo", p99: 140 });
    expect(bestPeer([{ peers: new Map() }])).toBeUndefined();
  });

  it("reads prefix_aware's figures, and no share of an oracle that hits nothing", () => {
    const report = (oracleHit: number) =>
      ({
        file: "x.json",
        oracle: { hitRate: oracleHit },
        policies: [
          { policy: "sglang", hitRate: 0.1, ttftP50Ms: 1, ttftP99Ms: 2, maxLoadRatio: 1 },
          {
            policy: "prefix_aware",
            hitRate: 0.4,
            ttftP50Ms: 10,
            ttftP99Ms: 90,
            maxLoadRatio: 1.2,
            e2eP99Ms: 900,
          },
        ],
      }) as unknown as Report;
    expect(figures(report(0.8))).toEqual({
      p50: 10,
      p99: 90,
      hit: 0.4,
      ofOracle: 0.5,
      e2eP99: 900,
      load: 1.2,
    });
    expect(figures(report(0)).ofOracle).toBeNaN();
    expect(() => figures({ ...report(1), policies: [] } as Report)).toThrow(/no prefix_aware/);
  });

  it("prints a group's means, per-seed Δ, worst maxLoadRatio and the best peer against both folders", () => {
    const rows = [
      row("w-tuning-s1.json", fig(100, 1.1), fig(90, 1.3), { sglang: 100, llmd: 80 }),
      row("w-tuning-s2.json", fig(300, 1.2), fig(330, 1.0), { sglang: 100, llmd: 140 }),
    ];
    const g = cells(groupTable(rows, true)).get("w-tuning (2)")!;
    expect(g[1]).toBe("200.0 ms → 210.0 ms");
    expect(g[2]).toBe("+5.0% [−10.0%, +10.0%]");
    expect(g[3]).toBe("50.0% (62.5%) → 50.0% (62.5%)");
    expect(g[4]).toBe("2.00 s → 2.10 s (+5.0%)");
    expect(g[5]).toBe("1.20 → 1.30");
    expect(g[6]).toBe("sglang 100.0 ms");
    expect(g[7]).toBe("+100.0% → +110.0%");
    const r = cells(reportTable(rows, true)).get("w-tuning-s1")!;
    expect(r[2]).toBe("−10.0%");
    expect(r[6]).toBe("llmd 80.0 ms");
    expect(r[7]).toBe("+25.0% → +12.5%");
    // Without a peer folder, no peer columns.
    expect(cells(reportTable(rows, false)).get("w-tuning-s1")).toHaveLength(6);
  });
});
