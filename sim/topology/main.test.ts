import { describe, expect, it } from "vitest";
import { topologyCommand } from "./main";

function run(argv: string[]): { code: number; out: string } {
  let out = "";
  const code = topologyCommand(argv, (s) => {
    out += s;
  });
  return { code, out };
}

/** The added figures of one client's row in the first (steady-state) table. */
function firstRow(out: string, client: string): string[] {
  const line = out.split("\n").find((l) => l.startsWith(`| ${client} `))!;
  return line
    .split("|")
    .map((c) => c.trim())
    .filter((c) => c !== "");
}

describe("npm run bench:topology", () => {
  it("prints the tables with the command that made them", () => {
    const { code, out } = run([]);
    expect(code).toBe(0);
    expect(out).toContain("npm run bench:topology\n");
    expect(out).toContain("placement + hint (recommended)");
    expect(firstRow(out, "eu-west")).toEqual([
      "eu-west",
      "91 ms",
      "+55 local",
      "+86",
      "+55 local",
      "+9",
      "+57 local",
    ]);
  });

  it("takes your own round trips and regions", () => {
    const { code, out } = run(["--rtt", "us-east:eu-west=66.6", "--clients", "eu-west", "--gateway-ms", "3"]);
    expect(code).toBe(0);
    expect(out).toContain(
      "npm run bench:topology -- --rtt us-east:eu-west=66.6 --clients eu-west --gateway-ms 3",
    );
    expect(firstRow(out, "eu-west").slice(0, 4)).toEqual(["eu-west", "77 ms", "+53 local", "+70"]);
  });

  it("refuses an unknown region or a malformed --rtt with usage (exit 2)", () => {
    const errors: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((s: string) => {
      errors.push(s);
      return true;
    }) as typeof process.stderr.write;
    try {
      expect(run(["--fleet", "mars"]).code).toBe(2);
      expect(run(["--rtt", "us-east-eu-west"]).code).toBe(2);
      expect(run(["--rtt", "us-east:us-east=3"]).code).toBe(2);
    } finally {
      process.stderr.write = original;
    }
    expect(errors.join("")).toContain('unknown region "mars"');
    expect(errors.join("")).toContain("expected A:B=MS");
    expect(errors.join("")).toContain("two different regions");
  });
});
