/**
 * A/B of frozen Worker bundles: the same sequential requests (4k-token
 * prompts sharing a system prompt) through each bundle in turn, in rounds,
 * interleaved, against the same two fast emulators. One operation = one
 * streamed request; the figure is the time outside the backend (client TTFT
 * minus the emulator's own), whose p50 difference between bundles is what a
 * change to the Worker costs or saves. `passthrough` names the null gateway;
 * `null-do` the null gateway that also makes the gateway's two Durable Object
 * calls (route, then complete once the body has ended) to an object that does
 * no routing (null-do-worker.js): null-do − passthrough is workerd's RPC
 * floor, a gateway bundle − null-do our own work.
 *
 *   npm run bench:ab-bundles -- --snapshot DIR          (bundle the checkout into DIR)
 * `--interleave request` starts every arm's gateway at once and alternates
 * the arms request by request (the steadier comparison on a shared machine);
 * `round` (default) serves each arm's requests in one block per round.
 *
 *   npm run bench:ab-bundles -- [--requests 300] [--rounds 3] [--system-tokens 3968] [--interleave round|request] DIR_A DIR_B … | passthrough | null-do
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_ENGINE_CONFIG } from "../../sim/model/presets";
import { servedTtftMs } from "../emulator/fleet";
import { summarize } from "../latency-summary";
import { gatewayCostConfig, startEmulators, startGatewayOver } from "./arms";
import { corpusTokens, sharedSystemChatBodies } from "./corpus";
import type { Gateway } from "./gateway";
import { nullDoConfig, passthroughConfig } from "./gateway";
import { streamRequest } from "./stream-client";
import { configServingBundle, wranglerDryRun } from "./wrangler-build";

const MODEL = "llama-3.1-8b-instruct";
const PASSTHROUGH = "passthrough";
const NULL_DO = "null-do";

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      requests: { type: "string", default: "300" },
      rounds: { type: "string", default: "3" },
      "system-tokens": { type: "string", default: "3968" },
      snapshot: { type: "string" },
      // round: each arm's requests in one block per round (as before); request: arms alternate request by request.
      interleave: { type: "string", default: "round" },
    },
  });
  const projectDir = process.cwd();
  if (values.snapshot !== undefined) {
    await wranglerDryRun(projectDir, resolve(values.snapshot));
    process.stdout.write(`bundled the checkout into ${resolve(values.snapshot)}\n`);
    return;
  }
  const n = Number(values.requests);
  const interleave = values.interleave;
  if (interleave !== "round" && interleave !== "request")
    throw new Error(`--interleave ${interleave}: round or request`);
  const rounds = Number(values.rounds);
  if (!(n > 0 && rounds > 0) || positionals.length === 0)
    throw new Error(
      "usage: npm run bench:ab-bundles -- [--requests N] [--rounds R] DIR_A DIR_B … | passthrough | null-do | --snapshot DIR",
    );
  const pass = positionals.includes(PASSTHROUGH) ? await passthroughConfig(projectDir) : undefined;
  const nullDo = positionals.includes(NULL_DO) ? await nullDoConfig(projectDir) : undefined;
  const configs = await Promise.all(
    positionals.map((d) =>
      d === PASSTHROUGH
        ? pass!.configPath
        : d === NULL_DO
          ? nullDo!.configPath
          : configServingBundle(projectDir, resolve(d)),
    ),
  );
  const cfg = gatewayCostConfig(MODEL, DEFAULT_ENGINE_CONFIG);
  const corpus = corpusTokens(projectDir);
  const body = sharedSystemChatBodies(corpus, MODEL, Number(values["system-tokens"]));
  const emulators = await startEmulators(cfg);
  const outside = positionals.map((): number[] => []);
  let seq = 0;
  /** One request through arm `arm`'s gateway; its time outside the backend once the isolate is warm. */
  const measure = async (arm: number, url: string, i: number): Promise<void> => {
    const id = `ab-request-${seq++}`;
    const r = await streamRequest({
      url: `${url}/v1/chat/completions`,
      apiKey: "ab-bundles-gateway-key",
      body: body(i),
      timeoutMs: 30_000,
      headers: {
        "x-request-id": id,
        ...(positionals[arm] === PASSTHROUGH ? { "x-e2e-backend": "0" } : {}),
      },
    });
    // The emulator knows the request by the id the gateway sent it (the client's, made unique).
    const server = servedTtftMs(emulators, r.upstreamRequestId ?? id);
    if (r.outcome !== "ok" || r.ttftMs === undefined || server === undefined)
      throw new Error(`${positionals[arm]}: request failed: ${r.status} ${r.error ?? ""}`);
    if (i >= 10) outside[arm]!.push(r.ttftMs - server); // the first 10 warm the isolate
  };
  const start = (configPath: string) =>
    startGatewayOver(emulators, cfg, {
      policy: "least_outstanding",
      apiKey: "ab-bundles-gateway-key",
      configPath,
      runtime: "workerd",
    });
  try {
    for (let round = 0; round < rounds; round++) {
      if (interleave === "request") {
        // Every arm's gateway up at once; request i goes to each arm in turn (the first arm rotating),
        // so a change in the machine's load falls on every arm alike.
        const gws: Gateway[] = [];
        try {
          for (const configPath of configs) gws.push(await start(configPath));
          for (let i = 0; i < n + 10; i++)
            for (let j = 0; j < gws.length; j++) {
              const arm = (i + j) % gws.length;
              await measure(arm, gws[arm]!.url, i);
            }
        } finally {
          await Promise.allSettled(gws.map((g) => g.close()));
        }
        continue;
      }
      for (const [arm, configPath] of configs.entries()) {
        const gw = await start(configPath);
        try {
          for (let i = 0; i < n + 10; i++) await measure(arm, gw.url, i);
        } finally {
          await gw.close();
        }
      }
    }
  } finally {
    await Promise.allSettled(emulators.map((e) => e.close()));
    await pass?.dispose();
    await nullDo?.dispose();
  }
  process.stdout.write(
    `time outside the backend, ms (${rounds} rounds × ${n} sequential requests per bundle, interleaved by ${interleave})\n` +
      "| bundle | p50 | mean | p90 | p99 |\n| --- | --- | --- | --- | --- |\n",
  );
  for (const [arm, dir] of positionals.entries()) {
    const s = summarize(outside[arm]!);
    process.stdout.write(
      `| ${dir} | ${s.p50.toFixed(2)} | ${s.mean.toFixed(2)} | ${s.p90.toFixed(2)} | ${s.p99.toFixed(2)} |\n`,
    );
  }
  if (interleave !== "request" || positionals.length < 2) return;
  // Request i of every arm ran back to back: their differences, request by request, cancel the load
  // the machine had at that moment.
  process.stdout.write(
    "\npaired by request (each arm − the arm listed before it), ms\n| bundles | median Δ | middle half of Δ |\n| --- | --- | --- |\n",
  );
  for (const [arm, dir] of positionals.entries()) {
    if (arm === 0) continue;
    const d = outside[arm]!.map((x, k) => x - outside[arm - 1]![k]!).sort((a, b) => a - b);
    const at = (q: number) => d[Math.min(d.length - 1, Math.floor(q * d.length))]!;
    process.stdout.write(
      `| ${dir} − ${positionals[arm - 1]} | ${at(0.5).toFixed(2)} | ${at(0.25).toFixed(2)} … ${at(0.75).toFixed(2)} |\n`,
    );
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
