/** Command line of `npm run bench:e2e`. */
import {
  DEFAULT_MAX_TOKENS_MODEL,
  isMaxTokensModel,
  MAX_TOKENS_MODEL_NAMES,
  type MaxTokensModelName,
} from "../../sim/client-max-tokens";
import {
  HelpRequested,
  parseFlags,
  scrapeFlag,
  secondClientFlag,
  TRAFFIC_OPTIONS,
  UsageError,
} from "../../sim/flags";
import type { SecondClient } from "../../sim/second-client";
import { GATEWAY_RUNTIMES, type GatewayRuntime } from "./gateway";

export interface E2eArgs {
  readonly workload: string;
  readonly rate: number;
  readonly backends: number;
  readonly durationS: number;
  readonly arms: readonly string[];
  readonly speed: number;
  readonly name: string;
  readonly seed: number;
  readonly maxRequests: number;
  readonly model: string;
  /** Per-emulator KV capacity override, tokens. */
  readonly kvCacheTokens?: number;
  /** generated-shared-prefix shape overrides (e.g. 4k-token prompts for the overhead figure). */
  readonly systemTokens?: number;
  readonly questionTokens?: number;
  readonly outputTokens?: number;
  /** Caps every request's output tokens (long trace replies; TTFT and hit rate do not depend on them). */
  readonly maxOutputTokens?: number;
  /** How clients set max_tokens, the gateway's output hint (sim/client-max-tokens.ts). */
  readonly maxTokens: MaxTokensModelName;
  /** Requests for synthetic generators that take a count. */
  readonly requests?: number;
  readonly sim: boolean;
  readonly requestTimeoutS: number;
  readonly cost: boolean;
  /** How the gateway is served (gateway.ts): workerd alone (default) or wrangler dev. */
  readonly runtime: GatewayRuntime;
  /** The gateway's ENGINE_SCRAPE_MS (0 = off, the default). */
  readonly scrapeMs: number;
  /** A share of requests sent straight to emulators, around the gateway (sim/second-client.ts). */
  readonly secondClient?: SecondClient;
}

export const USAGE = `npm run bench:e2e -- --workload <name|file:PATH> --rate R --backends N --duration S
  [--arms prefix_aware,least_outstanding,round_robin,random,consistent_hash,direct] [--speed X] [--name NAME]
  [--seed 1] [--max-requests 2000] [--model M] [--kv-cache-tokens T] [--requests N]
  [--system-tokens T --question-tokens T --output-tokens T]   (generated-shared-prefix shape)
  [--max-output-tokens T] [--max-tokens ${MAX_TOKENS_MODEL_NAMES.join("|")}] [--no-sim]
  [--request-timeout S] [--runtime workerd|wrangler]
  [--scrape-ms MS] (the gateway's ENGINE_SCRAPE_MS) [--second-client SHARE[:K]] (that share around the gateway)
npm run bench:e2e -- --cost    (gateway cost: prefix keys, RouterDO, cold start, decisions/s)`;

function num(name: string, v: string | undefined, def?: number): number {
  if (v === undefined) {
    if (def === undefined) throw new UsageError(`--${name} is required`);
    return def;
  }
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${name} must be a positive number, got "${v}"`);
  return n;
}

function secondClientOf(v: string | undefined): { secondClient?: SecondClient } {
  const c = secondClientFlag(v);
  return c === undefined ? {} : { secondClient: c };
}

function optNum(name: string, v: string | undefined): number | undefined {
  return v === undefined ? undefined : num(name, v);
}

export function parseE2eArgs(argv: readonly string[]): E2eArgs {
  const values = parseFlags(argv, {
    workload: { type: "string", default: "generated-shared-prefix" },
    rate: { type: "string" },
    backends: { type: "string" },
    duration: { type: "string" },
    arms: { type: "string", default: "prefix_aware,least_outstanding,direct" },
    speed: { type: "string" },
    name: { type: "string" },
    seed: { type: "string" },
    "max-requests": { type: "string" },
    model: { type: "string", default: "llama-3.1-8b-instruct" },
    "kv-cache-tokens": { type: "string" },
    "system-tokens": { type: "string" },
    "question-tokens": { type: "string" },
    "output-tokens": { type: "string" },
    "max-output-tokens": { type: "string" },
    "max-tokens": { type: "string", default: DEFAULT_MAX_TOKENS_MODEL },
    requests: { type: "string" },
    "no-sim": { type: "boolean", default: false },
    "request-timeout": { type: "string" },
    cost: { type: "boolean", default: false },
    runtime: { type: "string", default: "workerd" },
    ...TRAFFIC_OPTIONS,
    help: { type: "boolean", short: "h", default: false },
  });
  if (values.help) throw new HelpRequested();
  const cost = values.cost === true;
  const arms = values.arms
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (arms.length === 0) throw new UsageError("--arms: give at least one arm");
  const runtime = values.runtime as GatewayRuntime;
  if (!GATEWAY_RUNTIMES.includes(runtime))
    throw new UsageError(`--runtime must be one of ${GATEWAY_RUNTIMES.join(", ")}, got "${values.runtime}"`);
  const maxTokens = values["max-tokens"];
  if (!isMaxTokensModel(maxTokens))
    throw new UsageError(
      `--max-tokens must be one of ${MAX_TOKENS_MODEL_NAMES.join(", ")}, got "${maxTokens}"`,
    );
  const workload = values.workload;
  const base = workload.startsWith("file:") ? "file" : workload;
  return {
    workload,
    // Traces carry their own arrival times: --rate only shapes synthetic workloads.
    rate: num("rate", values.rate, cost || base === "mooncake" || base === "file" ? 1 : undefined),
    backends: Math.round(num("backends", values.backends, cost ? 4 : undefined)),
    durationS: num("duration", values.duration, cost ? 30 : undefined),
    arms,
    speed: num("speed", values.speed, 1),
    name: values.name ?? base,
    seed: num("seed", values.seed, 1),
    maxRequests: Math.round(num("max-requests", values["max-requests"], 2000)),
    model: values.model,
    kvCacheTokens: optNum("kv-cache-tokens", values["kv-cache-tokens"]),
    systemTokens: optNum("system-tokens", values["system-tokens"]),
    questionTokens: optNum("question-tokens", values["question-tokens"]),
    outputTokens: optNum("output-tokens", values["output-tokens"]),
    maxOutputTokens: optNum("max-output-tokens", values["max-output-tokens"]),
    maxTokens,
    requests: optNum("requests", values.requests),
    sim: values["no-sim"] !== true,
    requestTimeoutS: num("request-timeout", values["request-timeout"], 120),
    cost,
    runtime,
    scrapeMs: scrapeFlag(values["scrape-ms"]),
    ...secondClientOf(values["second-client"]),
  };
}
