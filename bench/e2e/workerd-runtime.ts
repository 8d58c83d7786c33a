/**
 * The gateway served by workerd alone: the same runtime binary `wrangler dev`
 * runs (wrangler's own `workerd` dependency), the same bundle, bindings and
 * SQLite-backed Durable Objects, but none of wrangler dev's development layers:
 * no entry-proxy workerd in front of the Worker, no inspector attached to the
 * isolate, no console forwarding to a Node CLI. That is the shape of
 * production (workerd behind a socket), so gateway-added latency is measured
 * here; `wrangler dev` stays available to show what the dev stack adds.
 *
 * The capnp config is generated from the wrangler config
 * (`unstable_readConfig`), so vars, compatibility date/flags, Durable Object
 * bindings and SQLite classes cannot drift from wrangler.toml.
 */
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { unstable_readConfig } from "wrangler";
import { freePort } from "./ports";
import { spawnGroup } from "./process-group";
import { wranglerDryRun } from "./wrangler-build";

/** Name of the generated config file (proc-cpu.ts tells this workerd from wrangler dev's by it). */
export const WORKERD_CONFIG_NAME = "gateway.capnp";

export interface WorkerdServeOptions {
  /** wrangler config of the Worker (its `main` is bundled unless `no_bundle`). */
  readonly configPath: string;
  /** Project root holding node_modules (wrangler, workerd). */
  readonly projectDir: string;
  /** Values bound as text besides the config's [vars] (secrets, var overrides). */
  readonly text: Readonly<Record<string, string>>;
  /** Opens workerd's V8 inspector on 127.0.0.1:port (CPU profiles of the isolate; costs speed). */
  readonly inspectorPort?: number;
  /**
   * Durable Object storage in this directory, kept on close (a restart with
   * the same directory finds the RouterDO's SQLite state, as a new deploy
   * does). Default: a directory of this server's own, removed on close.
   */
  readonly stateDir?: string;
}

export interface WorkerdServer {
  readonly url: string;
  readonly port: number;
  readonly logFile: string;
  readonly pgid: number;
  readonly exited: Promise<number | string>;
  close(): Promise<void>;
}

/** The workerd binary wrangler itself runs (not whichever version another package hoisted). */
export function workerdBinary(projectDir: string): string {
  const fromWrangler = createRequire(join(projectDir, "node_modules", "wrangler", "package.json"));
  const pkg = fromWrangler.resolve("workerd/package.json");
  return join(dirname(pkg), "bin", "workerd");
}

/** Cap'n Proto text literal (JSON's escapes are a subset capnp accepts). */
function capnpText(s: string): string {
  return JSON.stringify(s);
}

interface WorkerShape {
  /** The bundle (one ES module), relative to the config file. */
  readonly scriptPath: string;
  /** Text modules the bundle imports (wrangler's module rules: the dashboard's files), beside it. */
  readonly textModules?: readonly string[];
  readonly compatibilityDate: string;
  readonly compatibilityFlags: readonly string[];
  readonly text: Readonly<Record<string, string>>;
  /** Durable Object bindings of classes in this Worker: binding name → class name. */
  readonly durableObjects: Readonly<Record<string, string>>;
  readonly sqliteClasses: ReadonlySet<string>;
  readonly workerName: string;
}

/** The workerd config: one Worker on one socket, DOs on local disk, outbound to 127.0.0.1 allowed. */
export function workerdConfig(w: WorkerShape, port: number, doDir: string): string {
  const bindings = [
    ...Object.entries(w.text).map(([k, v]) => `(name = ${capnpText(k)}, text = ${capnpText(v)})`),
    ...Object.entries(w.durableObjects).map(
      ([k, cls]) => `(name = ${capnpText(k)}, durableObjectNamespace = ${capnpText(cls)})`,
    ),
  ];
  const classes = [...new Set(Object.values(w.durableObjects))];
  const namespaces = classes.map(
    (cls) =>
      `(className = ${capnpText(cls)}, uniqueKey = ${capnpText(`${w.workerName}-${cls}`)}, enableSql = ${w.sqliteClasses.has(cls)})`,
  );
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .gateway),
    (name = "internet", network = (allow = ["public", "private", "local"])),
    (name = "do-disk", disk = (path = ${capnpText(doDir)}, writable = true)),
  ],
  sockets = [(name = "http", address = ${capnpText(`127.0.0.1:${port}`)}, http = (), service = "main")],
);
const gateway :Workerd.Worker = (
  modules = [${[
    `(name = "index.js", esModule = embed ${capnpText(w.scriptPath)})`,
    ...(w.textModules ?? []).map((m) => `(name = ${capnpText(m)}, text = embed ${capnpText(m)})`),
  ].join(", ")}],
  compatibilityDate = ${capnpText(w.compatibilityDate)},
  compatibilityFlags = [${w.compatibilityFlags.map(capnpText).join(", ")}],
  bindings = [${bindings.join(",\n    ")}],
  durableObjectNamespaces = [${namespaces.join(", ")}],
  durableObjectStorage = ${classes.length > 0 ? '(localDisk = "do-disk")' : "(none = void)"},
  globalOutbound = "internet",
);
`;
}

/** A text module as wrangler writes it beside the bundle. */
const TEXT_MODULE = /^[0-9a-f]{40}-[\w.-]+$/;

function required(v: string | undefined, field: string, configPath: string): string {
  if (v === undefined || v === "") throw new Error(`${configPath}: ${field} is required`);
  return v;
}

async function bundledScript(configPath: string, projectDir: string, outDir: string): Promise<string> {
  const cfg = unstable_readConfig({ config: configPath });
  if (cfg.main === undefined) throw new Error(`${configPath}: no main`);
  if (cfg.no_bundle === true) return resolve(dirname(configPath), cfg.main);
  await wranglerDryRun(projectDir, outDir, configPath);
  // wrangler names the output after the entry file: take the one module it wrote.
  const modules = (await readdir(join(outDir, "dist"))).filter(
    (f) => f.endsWith(".js") || f.endsWith(".mjs"),
  );
  if (modules.length !== 1)
    throw new Error(`bundling ${configPath}: expected one module, got ${modules.join(", ")}`);
  return join(outDir, "dist", modules[0]!);
}

/** Starts workerd serving the Worker of `configPath`; resolves once the socket answers. */
export async function serveWithWorkerd(
  opts: WorkerdServeOptions,
  waitReady: (url: string, exited: Promise<number | string>) => Promise<void>,
): Promise<WorkerdServer> {
  const dir = await mkdtemp(join(tmpdir(), "pgw-workerd-"));
  const logFile = join(dir, "workerd.log");
  let stop = async (): Promise<void> => {};
  const close = async (): Promise<void> => {
    await stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const cfg = unstable_readConfig({ config: opts.configPath });
    // capnp `embed` paths are relative to the config file: the bundle sits beside it, with the text
    // modules wrangler wrote next to it (named `<sha1>-<file>`).
    const script = await bundledScript(opts.configPath, opts.projectDir, dir);
    await copyFile(script, join(dir, "index.js"));
    const textModules = (await readdir(dirname(script))).filter((f) => TEXT_MODULE.test(f));
    for (const m of textModules) await copyFile(join(dirname(script), m), join(dir, m));
    const sqlite = new Set<string>(
      cfg.migrations.flatMap((m: { new_sqlite_classes?: string[] }) => m.new_sqlite_classes ?? []),
    );
    const durableObjects: Record<string, string> = {};
    for (const b of cfg.durable_objects.bindings) {
      if (b.script_name !== undefined)
        throw new Error(`${b.name}: Durable Objects of other Workers are not served`);
      durableObjects[b.name] = b.class_name;
    }
    const text: Record<string, string> = {};
    for (const [k, v] of Object.entries(cfg.vars ?? {}))
      text[k] = typeof v === "string" ? v : JSON.stringify(v);
    Object.assign(text, opts.text);
    const doDir = opts.stateDir ?? join(dir, "do");
    await mkdir(doDir, { recursive: true });
    const port = await freePort();
    const configFile = join(dir, WORKERD_CONFIG_NAME);
    await writeFile(
      configFile,
      workerdConfig(
        {
          scriptPath: "index.js",
          textModules,
          compatibilityDate: required(cfg.compatibility_date, "compatibility_date", opts.configPath),
          compatibilityFlags: cfg.compatibility_flags ?? [],
          text,
          durableObjects,
          sqliteClasses: sqlite,
          workerName: required(cfg.name, "name", opts.configPath),
        },
        port,
        doDir,
      ),
      { mode: 0o600 },
    );
    const inspector =
      opts.inspectorPort === undefined ? [] : [`--inspector-addr=127.0.0.1:${opts.inspectorPort}`];
    const proc = spawnGroup(
      workerdBinary(opts.projectDir),
      ["serve", "--experimental", ...inspector, configFile],
      {
        cwd: dir,
        logFile,
      },
    );
    stop = () => proc.stop();
    const url = `http://127.0.0.1:${port}`;
    await waitReady(url, proc.exited);
    return { url, port, logFile, pgid: proc.pid, exited: proc.exited, close };
  } catch (err) {
    const tail = (await readFile(logFile, "utf8").catch(() => "")).slice(-2000);
    await close();
    throw new Error(`workerd did not start: ${(err as Error).message}\n${tail}`);
  }
}
