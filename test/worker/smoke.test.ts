import { describe, expect, it } from "vitest";

describe("smoke", () => {
  it("runs in workerd", () => {
    expect(typeof caches).toBe("object");
  });
});
