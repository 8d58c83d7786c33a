/**
 * Building the Worker the way a deploy does (`wrangler deploy --dry-run`) and
 * a wrangler config that serves the result as is: shared by the gateway
 * harness (gateway.ts), workerd alone (workerd-runtime.ts) and the bundle A/B.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { spawnGroup } from "./process-group";

/**
 * `wrangler deploy --dry-run` into outDir/dist: the very bundle a deploy would upload, of the
 * project's Worker or, with `configPath`, of another config's. Throws with the build log's tail.
 */
export async function wranglerDryRun(projectDir: string, outDir: string, configPath?: string): Promise<void> {
  const root = resolve(projectDir);
  await mkdir(outDir, { recursive: true });
  const logFile = join(outDir, "build.log");
  const build = spawnGroup(
    join(root, "node_modules", ".bin", "wrangler"),
    [
      "deploy",
      "--dry-run",
      ...(configPath === undefined ? [] : ["--config", configPath]),
      "--outdir",
      join(outDir, "dist"),
    ],
    { cwd: root, env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" }, logFile },
  );
  const code = await build.exited;
  await build.stop();
  if (code !== 0) {
    const tail = (await readFile(logFile, "utf8").catch(() => "")).slice(-2000);
    throw new Error(`wrangler deploy --dry-run failed (${code}):\n${tail}`);
  }
}

/** The project's wrangler config, written into dir with main = dir/dist/index.js served as is. */
export async function configServingBundle(projectDir: string, dir: string): Promise<string> {
  const toml = await readFile(join(resolve(projectDir), "wrangler.toml"), "utf8");
  const mainLine = /^main\s*=.*$/m;
  if (!mainLine.test(toml)) throw new Error("wrangler.toml has no main = line");
  const configPath = join(dir, "wrangler.toml");
  await writeFile(configPath, toml.replace(mainLine, 'main = "dist/index.js"\nno_bundle = true'));
  return configPath;
}
