/**
 * The do-driver fixture (workerd/do-driver.js with the real RouterDO class)
 * bundled once, as a deploy would (`wrangler deploy --dry-run`), with a
 * wrangler config that serves that bundle as is. Every workerd process
 * started from this config runs the very same code: no rebuild per process,
 * nothing for a concurrent edit of the checkout to change between them.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { DO_BINDING } from "./cost-do";
import { fixtureConfig, type WorkerBundle } from "./gateway";
import { wranglerDryRun } from "./wrangler-build";

export async function frozenDoDriver(projectDir: string): Promise<WorkerBundle> {
  const fixture = await fixtureConfig(
    "e2e-do-driver",
    "bench/e2e/workerd/do-driver.js",
    DO_BINDING,
    projectDir,
  );
  try {
    const dir = dirname(fixture.configPath);
    await wranglerDryRun(projectDir, dir, fixture.configPath);
    // wrangler names the output after the entry file: take the one module it wrote.
    const modules = (await readdir(join(dir, "dist"))).filter((f) => f.endsWith(".js") || f.endsWith(".mjs"));
    if (modules.length !== 1)
      throw new Error(`bundling do-driver: expected one module, got ${modules.join(", ")}`);
    const toml = await readFile(fixture.configPath, "utf8");
    const mainLine = /^main\s*=.*$/m;
    if (!mainLine.test(toml)) throw new Error(`${fixture.configPath}: no main = line`);
    const configPath = join(dir, "frozen.toml");
    await writeFile(configPath, toml.replace(mainLine, `main = "dist/${modules[0]}"\nno_bundle = true`));
    return { configPath, dispose: fixture.dispose };
  } catch (err) {
    await fixture.dispose();
    throw err;
  }
}
