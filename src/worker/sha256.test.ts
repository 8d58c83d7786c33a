import { describe, expect, it } from "vitest";
import { hexPrefix, sha256, sha256Hex } from "./sha256";

describe("sha256", () => {
  it("is SHA-256 (FIPS 180-2 test vector)", async () => {
    expect(hexPrefix(await sha256("abc"), 32)).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });

  it("gives the leading bytes as two hex digits each, zeros kept", async () => {
    expect(hexPrefix(new Uint8Array([0, 1, 0xab, 0xff]), 3)).toBe("0001ab");
    expect(await sha256Hex("abc", 4)).toBe("ba7816bf");
    expect(await sha256Hex("abc", 16)).toHaveLength(32);
  });
});
