/**
 * The gateway under test: the real Worker and RouterDO in local workerd via
 * `wrangler dev`, wired to a given set of backends and one routing policy.
 *
 * Every start gets its own temp dir holding the secrets (an env file passed
 * with --env-file, so the checkout's .dev.vars is never read or written) and
 * the Durable Object state (--persist-to), so each arm starts with an empty
 * RouterDO: no affinity carried over from the previous arm.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "./ports";
import { type GroupProcess, spawnGroup } from "./process-group";

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
}

export interface Gateway {
  readonly url: string;
  readonly port: number;
  readonly apiKey: string;
  /** wrangler's stdout+stderr (worker logs included). */
  readonly logFile: string;
  /** Process group of wrangler and its workerd children (for CPU accounting). */
  readonly pgid: number;
  close(): Promise<void>;
}

/** dotenv value: single quotes keep JSON's double quotes literal. */
function envLine(key: string, value: string): string {
  if (value.includes("'") || value.includes("\n")) throw new Error(`${key}: value cannot hold ' or newlines`);
  return `${key}='${value}'\n`;
}

export async function waitForHttp(url: string, timeoutMs: number, proc?: GroupProcess): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let exited = false;
  void proc?.exited.then(() => {
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

export async function startGateway(opts: StartGatewayOptions): Promise<Gateway> {
  const projectDir = resolve(opts.projectDir ?? process.cwd());
  const dir = await mkdtemp(join(tmpdir(), "pgw-e2e-"));
  const envFile = join(dir, "gateway.env");
  const logFile = join(dir, "wrangler.log");
  await writeFile(
    envFile,
    envLine("BACKENDS", JSON.stringify(opts.backends)) +
      envLine("GATEWAY_API_KEYS", opts.apiKey) +
      envLine("ADMIN_TOKEN", opts.adminToken ?? "e2e-admin-token-0123456789"),
    { mode: 0o600 },
  );
  const port = await freePort();
  const inspectorPort = await freePort();
  const vars = { ROUTING_POLICY: opts.policy, ...opts.vars };
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
    await waitForHttp(`${url}/`, opts.readyTimeoutMs ?? 60_000, proc);
  } catch (err) {
    const tail = (await readFile(logFile, "utf8").catch(() => "")).slice(-2000);
    await close();
    throw new Error(`wrangler dev did not start: ${(err as Error).message}\n${tail}`);
  }
  return { url, port, apiKey: opts.apiKey, logFile, pgid: proc.pid, close };
}
