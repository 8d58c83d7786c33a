import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SAFE_REQUEST_ID } from "./middleware";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

describe("a client's x-request-id", () => {
  it("is kept by the rule README states, as written in the code", () => {
    expect(readme).toContain(`\`${SAFE_REQUEST_ID.source}\``);
    // The rule at its edges, as README words it: 8 to 128 of letters, digits, `.`, `_`, `:`, `-`.
    for (const id of ["abcd-123", "a".repeat(128), "Req_1.2:3-x"])
      expect(SAFE_REQUEST_ID.test(id), id).toBe(true);
    for (const id of ["req-1", "my-id-1", "a".repeat(129), "has space", "ünïcode-id"])
      expect(SAFE_REQUEST_ID.test(id), id).toBe(false);
  });
});
