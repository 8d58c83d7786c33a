import { describe, expect, it } from "vitest";
import { cellName, cellOwning, poolCells, specVersion } from "./pool-cells";
import { testPoolSpec } from "./pool-spec-fixture";
import type { PoolSpec } from "./router-rpc";

function spec(n: number, extra: Partial<PoolSpec> = {}): PoolSpec {
  const backends = Array.from({ length: n }, (_, i) => ({ id: `gpu-${i}`, url: `https://gpu-${i}.example` }));
  return { ...testPoolSpec(backends, {}, 442_368), ...extra };
}

describe("poolCells", () => {
  it("K = 1 is the single RouterDO of before: named by the model, the pool's own spec and version", async () => {
    const s = spec(16);
    const version = await specVersion(s);
    const cells = await poolCells("llama", s, version, "auto");
    expect(cells).toEqual([{ name: "llama", index: 0, spec: s, version }]);
    expect(cells[0]!.spec).toBe(s);
    expect(await poolCells("llama", s, version, 1)).toEqual(cells);
  });

  it("auto: one cell per 16 backends; each cell's spec holds its backends only, the pool's settings otherwise", async () => {
    const s = spec(64);
    const cells = await poolCells("llama", s, await specVersion(s), "auto");
    expect(cells.map((c) => c.name)).toEqual([
      "llama cell 1/4",
      "llama cell 2/4",
      "llama cell 3/4",
      "llama cell 4/4",
    ]);
    const ids = cells.flatMap((c) => c.spec.backends.map((b) => b.id));
    expect(new Set(ids).size).toBe(64);
    for (const c of cells) {
      expect(c.spec.backends.length).toBe(16);
      expect({ ...c.spec, backends: [] }).toEqual({ ...s, backends: [] });
      expect(c.version).toBe(await specVersion(c.spec));
    }
    expect(new Set(cells.map((c) => c.version)).size).toBe(4);
    expect(cellOwning(cells, "gpu-7")!.spec.backends.some((b) => b.id === "gpu-7")).toBe(true);
    expect(cellOwning(cells, "nope")).toBeUndefined();
  });

  it("a number is taken as is (clamped to the backends); a re-cut pool gets new object names", async () => {
    const s = spec(3);
    const cells = await poolCells("m", s, await specVersion(s), 8);
    expect(cells.map((c) => c.name)).toEqual(["m cell 1/3", "m cell 2/3", "m cell 3/3"]);
    expect(cellName("m", 0, 1)).toBe("m");
    expect(cellName("m", 0, 2)).not.toBe(cellName("m", 0, 3));
  });
});
