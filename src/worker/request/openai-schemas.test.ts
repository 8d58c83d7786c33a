import { describe, expect, it } from "vitest";
import { promptCount } from "./openai-schemas";

describe("promptCount", () => {
  it("counts a batch's prompts: strings or token-id lists; a string or one token-id list is one", () => {
    expect(promptCount("hello")).toBe(1);
    expect(promptCount([1, 2, 3])).toBe(1);
    expect(promptCount(["a"])).toBe(1);
    expect(promptCount(["a", "b", "c"])).toBe(3);
    expect(promptCount([[1, 2], [3]])).toBe(2);
  });
});
