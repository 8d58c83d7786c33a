import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EXAMPLE_ADMIN_TOKEN, EXAMPLE_GATEWAY_KEY, isLoopbackUrl } from "./example-secrets";

/** KEY=value lines of a dotenv file (values unquoted). */
function dotenv(path: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m) out.set(m[1]!, m[2]!.replace(/^'(.*)'$/, "$1"));
  }
  return out;
}

describe("the example secrets", () => {
  it("are the ones .dev.vars.example publishes", () => {
    const example = dotenv(new URL("../../.dev.vars.example", import.meta.url).pathname);
    expect(example.get("ADMIN_TOKEN")).toBe(EXAMPLE_ADMIN_TOKEN);
    expect(example.get("GATEWAY_API_KEYS")?.split(",")[0]?.trim().split(/\s+/)[0]).toBe(EXAMPLE_GATEWAY_KEY);
    // ...and the example's fleet is on loopback, where they stay valid for npm run dev.
    const backends = JSON.parse(example.get("BACKENDS")!) as { url: string }[];
    expect(backends.every((b) => isLoopbackUrl(b.url))).toBe(true);
  });

  it.each([
    ["http://127.0.0.1:8101", true],
    ["http://127.10.0.3", true],
    ["http://localhost:8000", true],
    ["http://[::1]:8000", true],
    ["http://10.0.0.1:8000", false],
    ["https://gpu-1.example.com", false],
    ["http://127.0.0.1.example.com", false],
    ["not a url", false],
  ])("%s is loopback: %s", (url, loopback) => {
    expect(isLoopbackUrl(url)).toBe(loopback);
  });
});
