/**
 * The simulator commands' flags, read one way: `prefix-gateway simulate`
 * (cli.ts), the report generator (main.ts) and the load sweep (sweep.ts)
 * share the options they have in common and the rules and messages for
 * their values. A bad flag is a UsageError: the command prints it with its
 * usage.
 */

import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import { ENGINE_SCRAPE_MIN_MS, SETTINGS } from "../src/routing/defaults";
import {
  DEFAULT_MAX_TOKENS_MODEL,
  isMaxTokensModel,
  MAX_TOKENS_MODEL_NAMES,
  type MaxTokensModelName,
} from "./client-max-tokens";
import { didYouMean } from "./did-you-mean";
import { isSetName, SET_NAMES, type SetDataArgs, type SetName, seedOfSet } from "./eval-sets";
import { DEFAULT_KV_ALLOCATION, kvAllocationFlag } from "./model/engine-config";
import { DEFAULT_PRESET, ENGINE_PRESETS, enginePreset } from "./model/presets";
import { type EngineConfig, KV_ALLOCATIONS, type KvAllocation } from "./model/types";
import { isInline, type NoticeDelay, parseNoticeDelay } from "./notice-delay";
import { parsePolicies, type SimPolicyName } from "./policies";
import { parseSecondClient, type SecondClient } from "./second-client";
import type { FleetConfig } from "./simulator";
import { isTraceSpec } from "./workloads/index";
import { parseSampleRate } from "./workloads/sample-families";

export class UsageError extends Error {}

/**
 * Thrown by a command's argument reader on --help when it returns parsed
 * arguments rather than deciding what to print: failure() prints the usage
 * to stdout and the command exits 0, as any command's --help should.
 */
export class HelpRequested extends Error {
  constructor() {
    super("help requested");
  }
}

/**
 * How a command ends on an error: --help (HelpRequested) with the usage on
 * stdout (exit 0), a UsageError with the usage text (exit 2), anything else
 * in one line (exit 1). Returns the exit code.
 */
export function failure(
  e: unknown,
  command: string,
  usage: string,
  err: (s: string) => void,
  out: (s: string) => void = (s) => console.log(s),
): number {
  if (e instanceof HelpRequested) {
    out(usage);
    return 0;
  }
  if (e instanceof UsageError) {
    err(`${command}: ${e.message}\n\n${usage}`);
    return 2;
  }
  err(`${command}: ${e instanceof Error ? e.message : String(e)}\n`);
  return 1;
}

/** Options every simulator command reads alike. */
export const FLEET_OPTIONS = {
  backends: { type: "string" },
  preset: { type: "string" },
  "kv-tokens": { type: "string" },
  "kv-allocation": { type: "string" },
  speed: { type: "string" },
  policies: { type: "string" },
  seed: { type: "string" },
  "sample-families": { type: "string" },
  "max-tokens": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsOptionsConfig;

/** node:util's parseArgs, strict, no positionals; its complaints as UsageErrors. */
export function parseFlags<O extends ParseArgsOptionsConfig>(argv: readonly string[], options: O) {
  return parseFlagsAndArgs(argv, options, 0).values;
}

/** parseFlags for a command that also takes up to `maxPositionals` operands (a file name). */
export function parseFlagsAndArgs<O extends ParseArgsOptionsConfig>(
  argv: readonly string[],
  options: O,
  maxPositionals: number,
) {
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: true }>
  >;
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  } catch (e) {
    throw new UsageError(parseArgsComplaint(e, Object.keys(options)));
  }
  if (parsed.positionals.length > maxPositionals)
    throw new UsageError(`unexpected argument "${parsed.positionals[maxPositionals]}"`);
  return parsed;
}

/**
 * node's complaint about argv, reworded where it misleads: an unknown option is named with the nearest known
 * ones (`--backend` → `--backends`), without node's advice on positionals after `--`, which these commands
 * rarely take.
 */
export function parseArgsComplaint(e: unknown, known: readonly string[]): string {
  const message = e instanceof Error ? e.message : String(e);
  const code = (e as { code?: unknown } | null)?.code;
  const unknown = /^Unknown option '(-{1,2})([^'=]+)'/.exec(message);
  if (code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION" || unknown === null) return message;
  const [, dashes = "", name = ""] = unknown;
  const hint = dashes === "--" ? didYouMean(name, known) : "";
  return `unknown option ${dashes}${name}${hint || " (--help lists the options)"}`;
}

/** A positive number; `fallback` when the flag is absent, which is an error when there is none. */
export function positiveFlag(name: string, v: string | undefined, fallback?: number): number {
  if (v === undefined) {
    if (fallback === undefined) throw new UsageError(`--${name} is required`);
    return fallback;
  }
  const x = Number(v);
  if (!Number.isFinite(x) || x <= 0) throw new UsageError(`--${name} must be a positive number, got "${v}"`);
  return x;
}

/** A positive integer (a count); `fallback` as for positiveFlag. */
export function countFlag(name: string, v: string | undefined, fallback?: number): number {
  const x = positiveFlag(name, v, fallback);
  if (!Number.isInteger(x)) throw new UsageError(`--${name} must be an integer, got "${v}"`);
  return x;
}

/** The seed of workload and router randomness: any integer, 1 by default. */
export function seedFlag(v: string | undefined): number {
  const seed = v === undefined ? 1 : Number(v);
  if (!Number.isInteger(seed)) throw new UsageError(`--seed must be an integer, got "${v}"`);
  return seed;
}

/** The --preset, --kv-tokens and --kv-allocation lines of a command's usage. */
export const ENGINE_USAGE = {
  preset: `engine every backend runs (default ${DEFAULT_PRESET}): ${Object.keys(ENGINE_PRESETS).join(", ")}`,
  kvTokens: "KV-cache capacity per engine, tokens (default: the preset's)",
  kvAllocation: `how engines take KV blocks: ${KV_ALLOCATIONS.join(", ")} (default ${DEFAULT_KV_ALLOCATION}: step by step with preemption, as vLLM V1's scheduler does; reserve: prompt + output at admission, never preempted, the default before)`,
};

/** --preset NAME, --kv-tokens T and --kv-allocation A: what each backend runs, as a FleetConfig's engine fields. */
export function engineFlags(
  preset: string | undefined,
  kvTokens: string | undefined,
  kvAllocation?: string,
): Pick<FleetConfig, "preset" | "engine" | "kvCacheTokens"> {
  const name = preset ?? DEFAULT_PRESET;
  let config: EngineConfig;
  try {
    config = enginePreset(name);
  } catch (e) {
    throw new UsageError(`--preset: ${e instanceof Error ? e.message : String(e)}`);
  }
  // maxModelLen stays the preset's (engineConfig reads it by name): `engine` is what reports print.
  const { kvCacheTokens, blockTokens: _, maxModelLen: __, ...preset_ } = config;
  let allocation: KvAllocation;
  try {
    allocation = kvAllocationFlag(kvAllocation);
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
  // Written out even when it is the default: a report says which allocation it ran, and reports written
  // before the default changed (no kvAllocation: reserve) stay told apart from those written since.
  const engine = { ...preset_, kvAllocation: allocation };
  return { preset: name, engine, kvCacheTokens: positiveFlag("kv-tokens", kvTokens, kvCacheTokens) };
}

/** --set NAME: tuning or scoring (eval-sets.ts); undefined when absent. */
export function setFlag(v: string | undefined): SetName | undefined {
  if (v === undefined) return undefined;
  if (!isSetName(v)) throw new UsageError(`--set must be one of ${SET_NAMES.join(", ")}, got "${v}"`);
  return v;
}

/**
 * The set and seed in a default report name: `-<set>-s<seed>` for a synthetic workload; for a trace, whose
 * set is its half, `-<set>` and its seed only when --seed gave one (the race replays each half on the set's
 * seeds; a command without --seed runs seed 1 and keeps the name it always had).
 */
export function setNameTag(
  set: SetName | undefined,
  isTrace: boolean,
  seed: number,
  seedGiven: boolean,
): string {
  if (set === undefined) return "";
  return isTrace && !seedGiven ? `-${set}` : `-${set}-s${seed}`;
}

/** The run's seed: --seed, checked against --set's seeds for a synthetic workload (its first by default). */
export function runSeed(set: SetName | undefined, workload: string, v: string | undefined): number {
  if (set === undefined || isTraceSpec(workload)) return seedFlag(v);
  try {
    return seedOfSet(set, workload, v === undefined ? undefined : seedFlag(v));
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
}

/** --policies: a comma list of names, or "all" (the default). */
export function policiesFlag(v: string | undefined): SimPolicyName[] {
  try {
    return parsePolicies(v ?? "all");
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
}

/** --sample-families R: a rate in (0, 1], as 0.25 or 1/4; undefined when absent. */
export function sampleRateFlag(v: string | undefined): number | undefined {
  try {
    return v === undefined ? undefined : parseSampleRate(v);
  } catch (e) {
    throw new UsageError(`--sample-families: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** --max-tokens MODEL: how clients set max_tokens, the router's output hint (client-max-tokens.ts). */
export function maxTokensFlag(v: string | undefined): MaxTokensModelName {
  if (v === undefined) return DEFAULT_MAX_TOKENS_MODEL;
  if (!isMaxTokensModel(v))
    throw new UsageError(`--max-tokens must be one of ${MAX_TOKENS_MODEL_NAMES.join(", ")}, got "${v}"`);
  return v;
}

/** The help of --max-tokens, its text starting at `column` (the command's help layout), for every command. */
export function maxTokensHelp(column: number): string {
  const lines = [
    "how clients set max_tokens, the only output length our router is told:",
    `${MAX_TOKENS_MODEL_NAMES.join(" | ")} (default ${DEFAULT_MAX_TOKENS_MODEL}; sim/README.md,`,
    '"The output hint"). Engines always generate the true length; peers read none',
  ];
  return `${"--max-tokens M".padEnd(column - 2)}${lines.join(`\n${" ".repeat(column)}`)}`;
}

/** Options of the commands that replay traffic the gateway does not see all of (bench:sim, bench:sweep). */
export const TRAFFIC_OPTIONS = {
  "scrape-ms": { type: "string" },
  "second-client": { type: "string" },
  "notice-delay-ms": { type: "string" },
} as const satisfies ParseArgsOptionsConfig;

export const TRAFFIC_USAGE = {
  scrapeMs:
    `the gateway's scrape of each engine's /metrics every MS ms, as ENGINE_SCRAPE_MS (default ` +
    `${SETTINGS.ENGINE_SCRAPE_MS.default}; 0 = off; else ≥ ${ENGINE_SCRAPE_MIN_MS}): our policies read engine ` +
    "state only as it took it; peers read it live",
  secondClient:
    "SHARE[:K]: that share of the requests goes straight to an engine, around the router, uniformly " +
    "among the first K engines (default all): load only the engines' own readings show",
  noticeDelay:
    "MEAN[:SIGMA[:CARRY]][,nofirst]: our router hears each first token and completion MEAN ms (× a " +
    "lognormal of log-σ SIGMA, mean 1) after the engine, a completion carried on a route call within CARRY ms " +
    "(REPORT_CARRY_MS), never before its first token; nofirst: no first token heard. Peers hear at once. " +
    "Default 0: at the engine's instant (sim/notice-delay.ts)",
};

/** --notice-delay-ms MEAN[:SIGMA[:CARRY]][,nofirst]; undefined when absent or inline (the default). */
export function noticeDelayFlag(v: string | undefined): NoticeDelay | undefined {
  if (v === undefined) return undefined;
  let d: NoticeDelay;
  try {
    d = parseNoticeDelay(v);
  } catch (e) {
    throw new UsageError(`--notice-delay-ms: ${e instanceof Error ? e.message : String(e)}`);
  }
  return isInline(d) ? undefined : d;
}

/** --scrape-ms MS: ENGINE_SCRAPE_MS's bounds; its default when absent. */
export function scrapeFlag(v: string | undefined): number {
  const s = SETTINGS.ENGINE_SCRAPE_MS;
  if (v === undefined) return s.default;
  const ms = Number(v);
  if (!Number.isInteger(ms) || ms < 0 || ms > s.max || (ms > 0 && ms < ENGINE_SCRAPE_MIN_MS))
    throw new UsageError(
      `--scrape-ms must be 0 (off) or an integer in ${ENGINE_SCRAPE_MIN_MS}..${s.max}, got "${v}"`,
    );
  return ms;
}

/** --second-client SHARE[:K]; undefined when absent. */
export function secondClientFlag(v: string | undefined): SecondClient | undefined {
  if (v === undefined) return undefined;
  try {
    return parseSecondClient(v);
  } catch (e) {
    throw new UsageError(`--second-client: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The options naming a run's workload and traffic, read alike by main.ts, cells-main.ts and index-audit-main.ts. */
export const WORKLOAD_OPTIONS = {
  workload: { type: "string" },
  rate: { type: "string" },
  requests: { type: "string" },
  set: { type: "string" },
  name: { type: "string" },
  out: { type: "string" },
} as const satisfies ParseArgsOptionsConfig;

/** What a run replays: the workload, its load (a rate, or a trace's speed), set, seed and request count. */
export interface WorkloadFlags {
  readonly workload: string;
  readonly isTrace: boolean;
  readonly backends: number;
  readonly rate: number;
  readonly speed: number;
  readonly set: SetName | undefined;
  readonly seed: number;
  readonly requests: number | undefined;
  /** The same run as loadSetData reads it (rate, seed, speed, requests, set). */
  readonly setData: SetDataArgs;
}

/** Reads WORKLOAD_OPTIONS and the fleet's size (`defaultBackends` when --backends is absent). */
export function workloadFlags(
  values: {
    workload?: string;
    rate?: string;
    speed?: string;
    requests?: string;
    set?: string;
    seed?: string;
    backends?: string;
  },
  defaultBackends: number,
): WorkloadFlags {
  const workload = values.workload;
  if (workload === undefined) throw new UsageError("--workload is required");
  const isTrace = isTraceSpec(workload);
  const set = setFlag(values.set);
  const rate = isTrace ? 1 : positiveFlag("rate", values.rate);
  const speed = positiveFlag("speed", values.speed, 1);
  const seed = runSeed(set, workload, values.seed);
  const requests = values.requests === undefined ? undefined : countFlag("requests", values.requests);
  return {
    workload,
    isTrace,
    backends: countFlag("backends", values.backends, defaultBackends),
    rate,
    speed,
    set,
    seed,
    requests,
    setData: { rate, seed, speed, requests, set },
  };
}
