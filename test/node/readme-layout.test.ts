import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** The paths that start the lines of README.md's Layout block. */
function layoutPaths(): string[] {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Layout"));
  const block = section.slice(
    section.indexOf("```\n") + 4,
    section.indexOf("\n```", section.indexOf("```\n") + 4),
  );
  return block
    .split("\n")
    .filter((line) => /^\S/.test(line))
    .map((line) => line.split(/\s+/)[0]!);
}

const dirsOf = (dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => `${dir}/${e.name}/`);

describe("README Layout", () => {
  it("names only paths that exist", () => {
    const paths = layoutPaths();
    expect(paths.length).toBeGreaterThan(10);
    for (const p of paths) expect(existsSync(join(root, p)), p).toBe(true);
  });

  it("names every folder of the product", () => {
    const paths = new Set(layoutPaths());
    for (const dir of [...dirsOf("src"), ...dirsOf("src/worker")]) expect(paths.has(dir), dir).toBe(true);
  });
});
