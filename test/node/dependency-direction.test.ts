import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { type ImportEdge, violations } from "./dependency-rules";

const root = fileURLToPath(new URL("../..", import.meta.url));
/** Not source: installed packages, build output, reports. */
const SKIP = new Set(["node_modules", "dist", ".git", ".wrangler", "results"]);

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|mts|mjs|js)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** Every import and export-from specifier of a file, static and dynamic (`import("…")`). */
function importsOf(path: string): ImportEdge[] {
  const file = relative(root, path).split(sep).join("/");
  const info = ts.preProcessFile(readFileSync(path, "utf8"), true, true);
  return info.importedFiles.map((f) => ({ file, specifier: f.fileName }));
}

describe("dependency direction (README Layout)", () => {
  it("holds for every source file of the repo", () => {
    const files = sourceFiles(root);
    expect(files.length).toBeGreaterThan(200);
    const edges = files.flatMap(importsOf);
    expect(edges.length).toBeGreaterThan(500);
    expect(violations(edges).map((v) => `${v.file} imports "${v.specifier}": ${v.rule}`)).toEqual([]);
  });

  it("finds imports of every form, and not in comments or strings", () => {
    const src = [
      'import a from "./a";',
      'import type { B } from "./b";',
      'import "./c";',
      'export { d } from "./d";',
      'export * from "./e";',
      'const f = await import("./f");',
      '// import g from "./g";',
      'const h = `from "./h"`;',
    ].join("\n");
    const specifiers = ts.preProcessFile(src, true, true).importedFiles.map((f) => f.fileName);
    expect(specifiers).toEqual(["./a", "./b", "./c", "./d", "./e", "./f"]);
  });

  it.each([
    ["src/routing/router.ts", "../prefix/block-keys", "src/routing imports nothing outside itself"],
    ["src/routing/router.ts", "zod", "src/routing imports nothing outside itself"],
    ["src/prefix/tokenizer.ts", "../routing/hash", "src/prefix imports nothing of the repo"],
    ["src/worker/router/router-client.ts", "../../../durable-objects/router-do", "only through src/index.ts"],
    ["src/worker/app.ts", "../../sim/run", "src/ and durable-objects/ import nothing"],
    ["durable-objects/router-do.ts", "../bench/e2e/gateway", "src/ and durable-objects/ import nothing"],
    ["sim/run.ts", "../bench/latency-summary", "sim/ imports nothing of bench/"],
    ["bin/prefix-gateway.mjs", "../bench/sim/cli.ts", "bin/ imports nothing of bench/"],
    ["sim/run.ts", "../../bench/latency-summary", "imports stay inside the repo"],
  ])("refuses %s importing %s", (file, specifier, rule) => {
    const found = violations([{ file, specifier }]);
    expect(found.map((v) => v.rule)).toEqual([expect.stringContaining(rule)]);
  });

  it.each([
    ["src/index.ts", "../durable-objects/router-do"],
    ["src/prefix/tokenizer.ts", "js-tiktoken/ranks/o200k_base"],
    ["src/routing/policies/prefix-aware.test.ts", "../../prefix/block-keys"],
    ["durable-objects/router-do.ts", "../src/routing"],
    ["bench/emulator/engine-driver.ts", "../../sim/model/engine-model"],
    ["sim/policies.ts", "../src/routing/index"],
  ])("allows %s importing %s", (file, specifier) => {
    expect(violations([{ file, specifier }])).toEqual([]);
  });
});
