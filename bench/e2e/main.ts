/**
 * `npm run bench:e2e`: the same workload replayed open-loop through each arm
 * (routing policies through the real gateway in local workerd, and `direct`),
 * back to back on fresh emulators; the report sets the measurement beside
 * the simulator's prediction for the same requests. `--cost` runs the
 * gateway cost profile instead (cost.ts).
 */
import { cpus } from "node:os";
import { join, resolve } from "node:path";
import { clientMaxTokens, hintStats, MAX_TOKENS_MODELS } from "../../sim/client-max-tokens";
import { describeSet } from "../../sim/eval-sets";
import { failure, HelpRequested, UsageError } from "../../sim/flags";
import { DEFAULT_PREFIX_TOKENS } from "../../sim/prepare";
import { describeSecondClient, secondClientTargets } from "../../sim/second-client";
import { isTraceSpec } from "../../sim/workloads/index";
import { parseE2eArgs, USAGE } from "./args";
import type { ArmResult } from "./arm-result";
import { DIRECT, PASSTHROUGH, runArm } from "./arms";
import { runCost } from "./cost";
import { bundleWorker } from "./gateway";
import { predictionFleet, replayWindow } from "./replay-window";
import { type E2eReport, renderMarkdown, writeReport } from "./report";
import { buildItems } from "./requests";
import { predict } from "./sim-prediction";

function machine(): string {
  const c = cpus();
  return `${c.length} × ${c[0]?.model ?? "cpu"}, Node ${process.version}`;
}

export async function main(argv: readonly string[]): Promise<void> {
  const a = parseE2eArgs(argv);
  if (a.cost) {
    await runCost(a);
    return;
  }
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const { engine, workload, window } = await replayWindow(a);
  const isTrace = isTraceSpec(a.workload);
  if (window.length === 0) throw new Error(`no request of ${a.workload} falls in the window`);
  // A trace's window is its first requests in arrival order: the tuning half's, unless it runs past the middle.
  const set = describeSet(
    isTrace
      ? { kind: "trace", from: 0, to: window.length, of: workload.requests.length }
      : { kind: "synthetic", workload: a.workload, seed: a.seed },
  );
  log(`${a.workload}: ${window.length} requests in a ${a.durationS} s window at speed ×${a.speed}`);
  // What each request's client sends as max_tokens: the prediction below is told the same (same model, seed, requests).
  const maxTokensModel = MAX_TOKENS_MODELS[a.maxTokens];
  const hints = clientMaxTokens(window, maxTokensModel, a.seed);
  const items = buildItems(window, a.model, a.speed, hints);
  // The same requests go around the gateway in every arm (drawn from the seed, as the simulator draws them).
  const around =
    a.secondClient !== undefined
      ? secondClientTargets(window.length, a.backends, a.secondClient, a.seed)
      : undefined;
  const arms: ArmResult[] = [];
  const bundle = a.arms.some((x) => x !== DIRECT && x !== PASSTHROUGH) ? await bundleWorker() : undefined;
  try {
    for (const arm of a.arms) {
      log(`arm ${arm}`);
      const r = await runArm(arm, items, {
        backends: a.backends,
        model: a.model,
        speed: a.speed,
        engine,
        requestTimeoutMs: a.requestTimeoutS * 1000,
        runtime: a.runtime,
        gatewayVars: {
          PREFIX_TOKENS: String(DEFAULT_PREFIX_TOKENS),
          BLOCK_TOKENS: String(engine.blockTokens),
          ENGINE_SCRAPE_MS: String(a.scrapeMs),
        },
        ...(around !== undefined ? { around } : {}),
        ...(bundle !== undefined ? { configPath: bundle.configPath } : {}),
        log,
      });
      log(
        `  ${arm}: ok ${r.ok}/${r.sent}, TTFT p50 ${r.ttftMs.p50.toFixed(1)} ms, hit ${(100 * r.kv.hitRate).toFixed(1)}%`,
      );
      arms.push(r);
    }
  } finally {
    await bundle?.dispose();
  }
  const simulator = a.sim
    ? predict(
        workload.name,
        window,
        a.arms.filter((x) => x !== DIRECT && x !== PASSTHROUGH),
        predictionFleet(a, engine),
        DEFAULT_PREFIX_TOKENS,
        a.maxTokens,
      )
    : undefined;
  let promptTokens = 0;
  let outputTokens = 0;
  for (const r of window) {
    promptTokens += r.promptTokens;
    outputTokens += r.outputTokens;
  }
  const report: E2eReport = {
    name: a.name,
    command: `npm run bench:e2e -- ${argv.join(" ")}`,
    startedAt: new Date().toISOString(),
    machine: machine(),
    config: {
      workload: a.workload,
      rate: a.rate,
      backends: a.backends,
      durationS: a.durationS,
      speed: a.speed,
      seed: a.seed,
      model: a.model,
      runtime: a.runtime,
      requests: window.length,
      promptTokensMean: promptTokens / window.length,
      outputTokensMean: outputTokens / window.length,
      maxTokens: { model: a.maxTokens, summary: maxTokensModel.summary, ...hintStats(window, hints) },
      set,
      engine: { ...engine },
      scrapeMs: a.scrapeMs,
      ...(a.secondClient !== undefined
        ? { secondClient: describeSecondClient(a.secondClient, a.backends) }
        : {}),
    },
    arms,
    ...(simulator !== undefined ? { simulator } : {}),
    notes: [],
  };
  const base = resolve("bench/results", `e2e-${a.name}`);
  await writeReport(base, report);
  process.stdout.write(renderMarkdown(report));
  log(`wrote ${join("bench/results", `e2e-${a.name}`)}.{md,json}`);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  // --help and usage mistakes go through failure(): usage on stdout and 0, or the mistake and the usage on
  // stderr and 2. A run's own failure keeps its stack (where it broke matters) and exit 1.
  if (err instanceof HelpRequested || err instanceof UsageError)
    process.exit(failure(err, "bench:e2e", USAGE, (s) => process.stderr.write(s)));
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
