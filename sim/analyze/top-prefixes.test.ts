import { describe, expect, it } from "vitest";
import { Rng } from "../workloads/prng";
import { TopPrefixes } from "./top-prefixes";

describe("TopPrefixes (Space-Saving)", () => {
  it("finds the heavy prefixes among many one-off ones, with honest bounds", () => {
    const top = new TopPrefixes(64);
    const rng = new Rng(5);
    const truth = new Map<number, number>();
    for (let i = 0; i < 20_000; i++) {
      // Two system prompts reused often, a long tail of histories reused once.
      const key = i % 10 === 0 ? 1 : i % 10 === 1 ? 2 : 1000 + rng.int(0, 1_000_000);
      truth.set(key, (truth.get(key) ?? 0) + 1);
      top.add(key, key < 1000 ? 2048 : 300, "");
    }
    const got = top.top(5);
    expect(got.map((t) => t.key)).toEqual([1, 2]);
    for (const t of got) {
      expect(t.count).toBeGreaterThanOrEqual(truth.get(t.key)!);
      expect(t.count - t.overcount).toBeLessThanOrEqual(truth.get(t.key)!);
    }
  });

  it("asks for a preview once, when a prefix is reused a second time", () => {
    const top = new TopPrefixes(8);
    let asked = 0;
    const preview = () => {
      asked++;
      return "system You … the end";
    };
    top.add(7, 512, "t", preview);
    expect(asked).toBe(0);
    top.add(7, 512, "t", preview);
    top.add(7, 512, "t", preview);
    expect(asked).toBe(1);
    expect(top.top(1)).toEqual([
      { key: 7, count: 3, overcount: 0, tokens: 512, tenant: "t", preview: "system You … the end" },
    ]);
  });
});
