/**
 * A/B of Worker bundles on gateway-added latency, for judging an
 * optimisation (or a diagnostic build with a stage cut out) against the
 * current code on the same machine in the same minutes:
 *
 *   npx tsx bench/e2e/ab-bundles.ts [--requests 300] [--rounds 3] [--system-tokens 3968] DIR_A DIR_B ...
 *
 * Each DIR holds a bundle made by `wrangler deploy --dry-run --outdir DIR/dist`
 * from some checkout (`--snapshot DIR` makes one of the current checkout);
 * the word `passthrough` instead of a DIR is the null gateway
 * (passthrough-worker.js), the floor any Worker in front of the backends pays.
 * Arms run interleaved — A B A B … — each on workerd alone against the same
 * two fast emulators, with sequential streamed requests; the figure is the
 * time outside the backend (client TTFT − emulator TTFT) per request, so
 * the emulators' own speed cancels out. Sequential requests isolate the
 * per-request cost from queueing; run-to-run drift of this shared machine
 * is spread over every arm by the interleaving.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { summarize } from "../latency-summary";
import { DEFAULT_ENGINE_CONFIG } from "../model/presets";
import { backendEntries, startEmulators } from "./arms";
import { corpusText, corpusTokens } from "./corpus";
import { passthroughConfig, startGateway } from "./gateway";
import { spawnGroup } from "./process-group";
import { streamRequest } from "./stream-client";

const MODEL = "llama-3.1-8b-instruct";
const PASSTHROUGH = "passthrough";

/** Bundles the current checkout into dir/dist with a config serving it as is. */
async function snapshot(projectDir: string, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const logFile = join(dir, "build.log");
  const build = spawnGroup(
    join(projectDir, "node_modules", ".bin", "wrangler"),
    ["deploy", "--dry-run", "--outdir", join(dir, "dist")],
    { cwd: projectDir, env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" }, logFile },
  );
  const code = await build.exited;
  await build.stop();
  if (code !== 0) throw new Error(`wrangler deploy --dry-run failed (${code}); see ${logFile}`);
}

/** A wrangler config beside the bundle (project's bindings and vars, main = the bundle). */
async function configFor(projectDir: string, dir: string): Promise<string> {
  const toml = await readFile(join(projectDir, "wrangler.toml"), "utf8");
  const path = join(dir, "wrangler.toml");
  await writeFile(path, toml.replace(/^main\s*=.*$/m, 'main = "dist/index.js"\nno_bundle = true'));
  return path;
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      requests: { type: "string", default: "300" },
      rounds: { type: "string", default: "3" },
      "system-tokens": { type: "string", default: "3968" },
      snapshot: { type: "string" },
    },
  });
  const projectDir = process.cwd();
  if (values.snapshot !== undefined) {
    await snapshot(projectDir, resolve(values.snapshot));
    process.stdout.write(`bundled the checkout into ${resolve(values.snapshot)}\n`);
    return;
  }
  const n = Number(values.requests);
  const rounds = Number(values.rounds);
  if (!(n > 0 && rounds > 0) || positionals.length === 0)
    throw new Error("usage: ab-bundles.ts [--requests N] [--rounds R] DIR_A DIR_B … | --snapshot DIR");
  const pass = positionals.includes(PASSTHROUGH) ? await passthroughConfig(projectDir) : undefined;
  const configs = await Promise.all(
    positionals.map((d) => (d === PASSTHROUGH ? pass!.configPath : configFor(projectDir, resolve(d)))),
  );
  const cfg = {
    backends: 2,
    model: MODEL,
    speed: 100,
    engine: DEFAULT_ENGINE_CONFIG,
    requestTimeoutMs: 30_000,
    runtime: "workerd" as const,
  };
  const corpus = corpusTokens(projectDir);
  const system = corpusText(corpus, 3, Number(values["system-tokens"]));
  const body = (i: number): string =>
    JSON.stringify({
      model: MODEL,
      messages: [
        { role: "system", content: system },
        { role: "user", content: corpusText(corpus, 60_000 + 131 * i, 128) },
      ],
      max_tokens: 2,
      stream: true,
      stream_options: { include_usage: true },
    });
  const emulators = await startEmulators(cfg);
  const outside = positionals.map((): number[] => []);
  let seq = 0;
  try {
    for (let round = 0; round < rounds; round++) {
      for (const [arm, configPath] of configs.entries()) {
        const gw = await startGateway({
          backends: backendEntries(
            emulators.map((e) => e.url),
            cfg,
          ),
          policy: "least_outstanding",
          apiKey: "ab-key",
          configPath,
          runtime: "workerd",
        });
        try {
          for (let i = 0; i < n + 10; i++) {
            const id = `ab-request-${seq++}`;
            const r = await streamRequest({
              url: `${gw.url}/v1/chat/completions`,
              apiKey: "ab-key",
              body: body(i),
              timeoutMs: 30_000,
              headers: {
                "x-request-id": id,
                ...(positionals[arm] === PASSTHROUGH ? { "x-e2e-backend": "0" } : {}),
              },
            });
            const server = emulators.map((e) => e.serverTtftMs(id)).find((x) => x !== undefined);
            if (r.outcome !== "ok" || r.ttftMs === undefined || server === undefined)
              throw new Error(`${positionals[arm]}: request failed: ${r.status} ${r.error ?? ""}`);
            if (i >= 10) outside[arm]!.push(r.ttftMs - server); // the first 10 warm the isolate
          }
        } finally {
          await gw.close();
        }
      }
    }
  } finally {
    await Promise.allSettled(emulators.map((e) => e.close()));
    await pass?.dispose();
  }
  process.stdout.write(
    `time outside the backend, ms (${rounds} rounds × ${n} sequential requests per bundle, interleaved)\n` +
      "| bundle | p50 | mean | p90 | p99 |\n| --- | --- | --- | --- | --- |\n",
  );
  for (const [arm, dir] of positionals.entries()) {
    const s = summarize(outside[arm]!);
    process.stdout.write(
      `| ${dir} | ${s.p50.toFixed(2)} | ${s.mean.toFixed(2)} | ${s.p90.toFixed(2)} | ${s.p99.toFixed(2)} |\n`,
    );
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
