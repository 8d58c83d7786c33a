import { describe, expect, it } from "vitest";
import { POLICY_NAMES } from "./types";

describe("smoke", () => {
  it("node", () => {
    expect(POLICY_NAMES.length).toBe(5);
  });
});
