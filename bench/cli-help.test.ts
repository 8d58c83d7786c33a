import { spawnSync } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const tsx = resolve(repo, "node_modules/.bin/tsx");

/** The bench commands' entry points, as package.json's scripts run them. */
const COMMANDS = {
  "bench:e2e": "bench/e2e/main.ts",
  "bench:faults": "bench/faults/main.ts",
  "bench:sim": "sim/main.ts",
  "bench:sweep": "sim/sweep.ts",
  "bench:cells": "sim/cells-main.ts",
};

function run(file: string, ...args: string[]) {
  const r = spawnSync(tsx, [file, ...args], { cwd: repo, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("bench commands (spawned): --help is an answer, a mistyped flag a usage error", () => {
  it.each(Object.entries(COMMANDS))("%s --help: usage on stdout, exit 0", (name, file) => {
    const r = run(file, "--help");
    expect(r.err).toBe("");
    expect(r.out).toContain(`npm run ${name} --`);
    expect(r.code).toBe(0);
  });

  it("bench:e2e --backend: exit 2, the option meant named, then the usage", () => {
    const r = run(COMMANDS["bench:e2e"], "--backend", "4");
    expect(r.code).toBe(2);
    expect(r.err).toContain("bench:e2e: unknown option --backend; did you mean --backends?");
    expect(r.err).toContain("npm run bench:e2e --");
  });
});
