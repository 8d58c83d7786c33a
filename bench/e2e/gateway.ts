/**
 * The gateway under test: the real Worker and RouterDO in local workerd via
 * `wrangler dev`, wired to a given set of backends and one routing policy.
 *
 * Every start gets its own temp dir holding the secrets (an env file passed
 * with --env-file, so the checkout's .dev.vars is never read or written) and
 * the Durable Object state (--persist-to), so each arm starts with an empty
 * RouterDO: no affinity carried over from the previous arm.
 *
 * The Worker is bundled once per bench run (`bundleWorker`: wrangler deploy
 * --dry-run, the very bundle a deploy would upload) and served with
 * --no-bundle from a config outside the checkout. wrangler dev pointed at the
 * checkout watches its sources and rebuilds + reloads the isolate on every
 * save — with other people editing, that resets the isolate (memo, RouterDO)
 * mid-arm and burns CPU in esbuild. A frozen bundle also guarantees every
 * arm runs the same code.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "./ports";
import { spawnGroup } from "./process-group";
import { serveWithWorkerd } from "./workerd-runtime";
import { configServingBundle, wranglerDryRun } from "./wrangler-build";

/** One entry of the BACKENDS secret, as the Worker's config expects it. */
export interface BackendEntry {
  readonly id: string;
  readonly url: string;
  readonly models: readonly string[];
  readonly apiKey?: string;
  readonly weight: number;
  readonly kvCacheTokens: number;
}

export interface StartGatewayOptions {
  readonly backends: readonly BackendEntry[];
  /** ROUTING_POLICY var (validated by the Worker: a bad name fails its config). */
  readonly policy: string;
  readonly apiKey: string;
  readonly adminToken?: string;
  /** Further `--var KEY:VALUE` overrides (PREFIX_TOKENS, BALANCE_FACTOR, ...). */
  readonly vars?: Readonly<Record<string, string>>;
  /** Project root (node_modules, wrangler.toml); defaults to the current directory. */
  readonly projectDir?: string;
  /** Another wrangler config than the project's (tests of this harness). */
  readonly configPath?: string;
  readonly readyTimeoutMs?: number;
  /**
   * `workerd` (default): the bundle in workerd alone, production's shape (workerd-runtime.ts).
   * `wrangler`: under `wrangler dev`, with its entry proxy, inspector and log forwarding.
   */
  readonly runtime?: GatewayRuntime;
  /** workerd runtime only: expose the isolate's V8 inspector on this port (profiling). */
  readonly inspectorPort?: number;
  /** workerd runtime only: keep Durable Object state in this directory across restarts (workerd-runtime.ts). */
  readonly stateDir?: string;
}

/**
 * Vars every bench gateway starts with (an arm's `vars` may override them). The bench measures routing
 * and the gateway's own overhead with one client key, which sends far more than wrangler.toml's per-key
 * requests-per-period limit; and workerd alone serves no rate-limiting binding. So the per-key limits are
 * off here (KEY_MAX_CONCURRENT is 0 by default).
 */
const BENCH_VARS: Readonly<Record<string, string>> = { KEY_RATE_LIMIT: "off" };

export type GatewayRuntime = "workerd" | "wrangler";
export const GATEWAY_RUNTIMES: readonly GatewayRuntime[] = ["workerd", "wrangler"];

/** How each runtime serves the gateway, in the words the reports use. */
export const RUNTIME_DESCRIPTION: Readonly<Record<GatewayRuntime, string>> = {
  workerd:
    "workerd alone (wrangler's workerd binary, the frozen bundle, SQLite Durable Objects; no dev proxy or inspector)",
  wrangler: "`wrangler dev` (its entry-proxy workerd, inspector and log forwarding in front of the Worker)",
};

export interface Gateway {
  readonly url: string;
  readonly port: number;
  readonly apiKey: string;
  /** The runtime's stdout+stderr (worker logs included). */
  readonly logFile: string;
  readonly runtime: GatewayRuntime;
  /** Process group of the runtime (wrangler and its workerd children, or workerd alone) for CPU accounting. */
  readonly pgid: number;
  close(): Promise<void>;
}

export interface WorkerBundle {
  /** wrangler config (in the bundle's dir) that serves the bundle as is. */
  readonly configPath: string;
  dispose(): Promise<void>;
}

/** Builds the project's Worker once into a temp dir, with a config that serves it unbundled. */
export async function bundleWorker(projectDir = process.cwd()): Promise<WorkerBundle> {
  const dir = await mkdtemp(join(tmpdir(), "pgw-bundle-"));
  const dispose = () => rm(dir, { recursive: true, force: true });
  try {
    await wranglerDryRun(projectDir, dir);
    return { configPath: await configServingBundle(projectDir, dir), dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/**
 * A wrangler config serving one of the bench's fixture Workers (plain JS,
 * bundled by wrangler) with the product's compatibility date, so the runtime
 * is the same; `extraToml` adds bindings.
 */
export async function fixtureConfig(
  name: string,
  workerPath: string,
  extraToml = "",
  projectDir = process.cwd(),
): Promise<WorkerBundle> {
  const root = resolve(projectDir);
  const dir = await mkdtemp(join(tmpdir(), `pgw-${name}-`));
  const toml = await readFile(join(root, "wrangler.toml"), "utf8");
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
  if (date === undefined) throw new Error("wrangler.toml has no compatibility_date");
  // The product's module aliases (protobufjs/minimal, which the stats code imports and never uses), so
  // a fixture that bundles the RouterDO builds as the product does.
  const table = /^\[alias\]\n((?:(?!\[).*\n)*)/m.exec(toml)?.[1] ?? "";
  const aliases = [...table.matchAll(/^"([^"]+)"\s*=\s*"([^"]+)"/gm)]
    .map((m) => `${JSON.stringify(m[1])} = ${JSON.stringify(resolve(root, m[2]!))}\n`)
    .join("");
  const configPath = join(dir, "wrangler.toml");
  await writeFile(
    configPath,
    `name = "${name}"\nmain = ${JSON.stringify(resolve(root, workerPath))}\ncompatibility_date = "${date}"\n` +
      `${aliases === "" ? "" : `[alias]\n${aliases}`}${extraToml}`,
  );
  return { configPath, dispose: () => rm(dir, { recursive: true, force: true }) };
}

/** The null gateway (passthrough-worker.js): what the local runtime adds by itself. */
export function passthroughConfig(projectDir = process.cwd()): Promise<WorkerBundle> {
  return fixtureConfig("e2e-passthrough", "bench/e2e/passthrough-worker.js", "", projectDir);
}

/** The NullRouterDO binding and migration the null-do fixture needs (wrangler TOML). */
const NULL_DO_BINDING = `
[[durable_objects.bindings]]
name = "ROUTER"
class_name = "NullRouterDO"

[[migrations]]
tag = "v1"
new_sqlite_classes = ["NullRouterDO"]
`;

/**
 * The null gateway plus the gateway's two Durable Object calls to an object that does no routing
 * (null-do-worker.js): what workerd's RPC costs by itself, apart from our decision.
 */
export function nullDoConfig(projectDir = process.cwd()): Promise<WorkerBundle> {
  return fixtureConfig("e2e-null-do", "bench/e2e/null-do-worker.js", NULL_DO_BINDING, projectDir);
}

/** dotenv value: single quotes keep JSON's double quotes literal. */
function envLine(key: string, value: string): string {
  if (value.includes("'") || value.includes("\n")) throw new Error(`${key}: value cannot hold ' or newlines`);
  return `${key}='${value}'\n`;
}

export async function waitForHttp(
  url: string,
  timeoutMs: number,
  processExited?: Promise<unknown>,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let exited = false;
  void processExited?.then(() => {
    exited = true;
  });
  let lastError = "";
  while (performance.now() < deadline) {
    if (exited) throw new Error(`process exited before ${url} answered`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.body?.cancel();
      return;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms (${lastError})`);
}

function secrets(opts: StartGatewayOptions): Record<string, string> {
  return {
    BACKENDS: JSON.stringify(opts.backends),
    GATEWAY_API_KEYS: opts.apiKey,
    ADMIN_TOKEN: opts.adminToken ?? "e2e-admin-token-0123456789",
  };
}

export async function startGateway(opts: StartGatewayOptions): Promise<Gateway> {
  const projectDir = resolve(opts.projectDir ?? process.cwd());
  if ((opts.runtime ?? "workerd") === "workerd") {
    const server = await serveWithWorkerd(
      {
        configPath: opts.configPath ?? join(projectDir, "wrangler.toml"),
        projectDir,
        text: { ...secrets(opts), ...BENCH_VARS, ROUTING_POLICY: opts.policy, ...opts.vars },
        ...(opts.inspectorPort !== undefined ? { inspectorPort: opts.inspectorPort } : {}),
        ...(opts.stateDir !== undefined ? { stateDir: opts.stateDir } : {}),
      },
      (url, exited) => waitForHttp(`${url}/`, opts.readyTimeoutMs ?? 60_000, exited),
    );
    return {
      url: server.url,
      port: server.port,
      apiKey: opts.apiKey,
      logFile: server.logFile,
      runtime: "workerd",
      pgid: server.pgid,
      close: server.close,
    };
  }
  const dir = await mkdtemp(join(tmpdir(), "pgw-e2e-"));
  const envFile = join(dir, "gateway.env");
  const logFile = join(dir, "wrangler.log");
  await writeFile(
    envFile,
    Object.entries(secrets(opts))
      .map(([k, v]) => envLine(k, v))
      .join(""),
    { mode: 0o600 },
  );
  const port = await freePort();
  const inspectorPort = await freePort();
  const vars = { ...BENCH_VARS, ROUTING_POLICY: opts.policy, ...opts.vars };
  const args = [
    "dev",
    ...(opts.configPath === undefined ? [] : ["--config", opts.configPath]),
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(inspectorPort),
    "--env-file",
    envFile,
    "--persist-to",
    join(dir, "state"),
    "--show-interactive-dev-session=false",
    "--log-level",
    "warn",
    ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
  ];
  const proc = spawnGroup(join(projectDir, "node_modules", ".bin", "wrangler"), args, {
    cwd: projectDir,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", FORCE_COLOR: "0" },
    logFile,
  });
  const url = `http://127.0.0.1:${port}`;
  const close = async (): Promise<void> => {
    await proc.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitForHttp(`${url}/`, opts.readyTimeoutMs ?? 60_000, proc.exited);
  } catch (err) {
    const tail = (await readFile(logFile, "utf8").catch(() => "")).slice(-2000);
    await close();
    throw new Error(`wrangler dev did not start: ${(err as Error).message}\n${tail}`);
  }
  return { url, port, apiKey: opts.apiKey, logFile, runtime: "wrangler", pgid: proc.pid, close };
}
