import { describe, expect, it } from "vitest";
import { didYouMean, editDistance, suggestions } from "./did-you-mean";

describe("did you mean", () => {
  it("counts inserts, deletes, substitutions and a swap of neighbours as one edit each", () => {
    expect(editDistance("backend", "backends")).toBe(1);
    expect(editDistance("duraton-s", "duration-s")).toBe(1);
    expect(editDistance("polciies", "policies")).toBe(1);
    expect(editDistance("seed", "rate")).toBe(4);
  });

  it("names the near option, a name the typed one begins, and nothing far", () => {
    const known = ["backends", "kv-tokens", "kv-allocation", "seed", "set", "rate", "duration"];
    expect(suggestions("backend", known)).toEqual(["backends"]);
    expect(suggestions("kv", known)).toEqual(["kv-allocation", "kv-tokens"]);
    expect(suggestions("sed", known)).toEqual(["seed", "set"]);
    expect(suggestions("workload", known)).toEqual([]);
    expect(didYouMean("backend", known)).toBe("; did you mean --backends?");
    expect(didYouMean("kv", known)).toBe("; did you mean --kv-allocation or --kv-tokens?");
    expect(didYouMean("workload", known)).toBe("");
  });
});
