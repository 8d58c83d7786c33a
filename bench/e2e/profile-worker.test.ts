import { describe, expect, it } from "vitest";
import { aggregate } from "./profile-worker";

const frame = (functionName: string, lineNumber = 0) => ({
  functionName,
  url: functionName.startsWith("(") ? "" : "file:///b/index.js",
  lineNumber,
});

describe("aggregate (CPU profile → self and inclusive ms)", () => {
  // root → inference → (prefixKeys, inference (recursive) → routeVia); root → (idle)
  const profile = {
    nodes: [
      { id: 1, callFrame: frame("(root)"), children: [2, 6] },
      { id: 2, callFrame: frame("inference", 10), children: [3, 4] },
      { id: 3, callFrame: frame("prefixKeys", 20) },
      { id: 4, callFrame: frame("inference", 10), children: [5] },
      { id: 5, callFrame: frame("routeVia", 30) },
      { id: 6, callFrame: frame("(idle)") },
    ],
    samples: [2, 3, 3, 5, 6, 6, 6, 4],
    timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };

  it("sums self time per function and place, counts idle apart", () => {
    const a = aggregate(profile);
    expect(a.totalMs).toBe(8);
    expect(a.idleMs).toBe(3);
    expect(a.self.get("inference@index.js:11")?.ms).toBe(2);
    expect(a.self.get("prefixKeys@index.js:21")?.ms).toBe(2);
    expect(a.self.get("routeVia@index.js:31")?.ms).toBe(1);
  });

  it("counts a recursive function's inclusive time once", () => {
    const a = aggregate(profile);
    expect(a.inclusive.get("inference")).toBe(5);
    expect(a.inclusive.get("routeVia")).toBe(1);
    expect(a.inclusive.get("(root)")).toBe(8);
  });
});
