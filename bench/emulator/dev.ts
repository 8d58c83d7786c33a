/**
 * `npm run dev`: the whole stack on one machine. Reads `.dev.vars` (or, when
 * absent, `.dev.vars.example`), starts one emulated vLLM replica per entry of
 * BACKENDS on its URL's port (serving models[0], with its apiKey and
 * kvCacheTokens), then runs `wrangler dev` for the gateway in front of them.
 * Ctrl-C / SIGTERM stops everything.
 *
 *   npm run dev [-- --port P] [-- --speed X] [-- --no-wrangler]
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseEnv } from "node:util";
import { CONFIG_KEYS, jsonErrorHint } from "../../src/worker/config";
import { DEV_GATEWAY_PORT, emulatorStartError, parseDevOptions, unreadVarsWarnings } from "./dev-options";
import { type Emulator, startEmulator } from "./server";

interface DevBackend {
  readonly id: string;
  readonly url: URL;
  readonly model: string;
  readonly apiKey?: string;
  readonly kvCacheTokens?: number;
}

function fail(message: string): never {
  process.stderr.write(`dev: ${message}\n`);
  process.exit(2);
}

/** BACKENDS from the vars file, checked just enough to start emulators (the Worker validates it fully). */
function parseDevBackends(raw: string | undefined, file: string): DevBackend[] {
  if (raw === undefined) fail(`${file}: BACKENDS is not set`);
  let list: unknown;
  try {
    list = JSON.parse(raw);
  } catch (err) {
    // As the Worker says it (a position, and the usual culprit named: "262,144" pasted from vLLM's log).
    fail(`${file}: BACKENDS is ${jsonErrorHint(raw, err)}`);
  }
  if (!Array.isArray(list) || list.length === 0) fail(`${file}: BACKENDS must be a non-empty JSON array`);
  return list.map((b: unknown, i): DevBackend => {
    const at = `${file}: BACKENDS[${i}]`;
    if (typeof b !== "object" || b === null) fail(`${at}: must be an object`);
    const o = b as Record<string, unknown>;
    if (typeof o.id !== "string") fail(`${at}.id: must be a string`);
    let url: URL;
    try {
      url = new URL(String(o.url));
    } catch {
      fail(`${at}.url: not a URL (${String(o.url)})`);
    }
    if (!["127.0.0.1", "localhost", "[::1]"].includes(url.hostname) || url.port === "")
      fail(`${at}.url: an emulator needs a local URL with a port, got ${url.href}`);
    const models = o.models;
    if (!Array.isArray(models) || typeof models[0] !== "string")
      fail(`${at}.models: must list at least one model`);
    if (o.apiKey !== undefined && typeof o.apiKey !== "string") fail(`${at}.apiKey: must be a string`);
    const kv = o.kvCacheTokens;
    if (kv !== undefined && (typeof kv !== "number" || !Number.isInteger(kv) || kv < 1))
      fail(`${at}.kvCacheTokens: must be a positive integer`);
    return {
      id: o.id,
      url,
      model: models[0] as string,
      apiKey: o.apiKey as string | undefined,
      kvCacheTokens: kv as number | undefined,
    };
  });
}

async function main(): Promise<void> {
  const options = parseDevOptions(process.argv.slice(2));
  if (options instanceof Error) fail(options.message);
  const { speed, port } = options;

  const root = process.cwd();
  const own = resolve(root, ".dev.vars");
  const example = resolve(root, ".dev.vars.example");
  const useExample = !existsSync(own);
  const file = useExample ? example : own;
  if (!existsSync(file)) fail("neither .dev.vars nor .dev.vars.example found (run from the repo root)");
  const vars = parseEnv(readFileSync(file, "utf8"));
  const backends = parseDevBackends(vars.BACKENDS, file);
  for (const line of unreadVarsWarnings(Object.keys(vars), CONFIG_KEYS, file))
    process.stderr.write(`${line}\n`);

  const emulators: Emulator[] = [];
  let child: ChildProcess | undefined;
  let stopping = false;
  const stop = async (code: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    // wrangler runs in its own process group (with workerd under it): stop the whole group.
    if (child?.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        child.kill("SIGTERM");
      }
    }
    await Promise.all(emulators.map((e) => e.close()));
    process.exit(code);
  };
  process.once("SIGINT", () => void stop(0));
  process.once("SIGTERM", () => void stop(0));

  for (const b of backends) {
    try {
      const emu = await startEmulator({
        port: Number(b.url.port),
        host: b.url.hostname.replace(/^\[|\]$/g, ""),
        model: b.model,
        apiKey: b.apiKey,
        speed,
        engine: b.kvCacheTokens === undefined ? undefined : { kvCacheTokens: b.kvCacheTokens },
      });
      emulators.push(emu);
      process.stdout.write(`dev: emulator ${b.id} → ${emu.url} (${b.model})\n`);
    } catch (err) {
      process.stderr.write(`${emulatorStartError(b.id, b.url.href, err, useExample)}\n`);
      await stop(1);
    }
  }

  // The first entry's key: options such as `max_concurrent=N` follow it after whitespace.
  const gatewayKey =
    (vars.GATEWAY_API_KEYS ?? "").split(",")[0]?.trim().split(/\s+/)[0] || "<your gateway key>";
  const curl =
    `curl -N http://127.0.0.1:${port}/v1/chat/completions -H 'Authorization: Bearer ${gatewayKey}' ` +
    `-H 'content-type: application/json' -d '{"model":"${backends[0]!.model}","stream":true,` +
    `"messages":[{"role":"user","content":"Hello"}]}'`;
  if (options.noWrangler) {
    process.stdout.write(`dev: ${emulators.length} emulators ready (no gateway started). Ctrl-C stops.\n`);
    return;
  }

  const args = ["dev", "--port", String(port), "--ip", "127.0.0.1"];
  // wrangler reads .dev.vars itself; the example has to be named explicitly.
  if (useExample) args.push("--env-file", ".dev.vars.example");
  child = spawn(resolve(root, "node_modules/.bin/wrangler"), args, {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
    detached: true,
  });
  let announced = false;
  child.stdout?.on("data", (b: Buffer) => {
    process.stdout.write(b);
    if (!announced && /Ready on/i.test(b.toString())) {
      announced = true;
      const example =
        port === DEV_GATEWAY_PORT
          ? ""
          : `  GATEWAY_URL=http://127.0.0.1:${port} npx tsx examples/openai-quickstart.ts\n`;
      process.stdout.write(
        `\ndev: gateway ready on http://127.0.0.1:${port} — try:\n  ${curl}\n${example}\n`,
      );
    }
  });
  child.on("exit", (code) => {
    process.stderr.write(`dev: wrangler exited (${code ?? "signal"})\n`);
    void stop(code ?? 0);
  });
}

main().catch((err: unknown) => fail(err instanceof Error ? (err.stack ?? err.message) : String(err)));
