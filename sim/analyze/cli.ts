/**
 * `prefix-gateway analyze <requests.jsonl>`: measure before enabling. How
 * much of a request log's prompt traffic repeats a prefix already seen, and
 * what prefix-aware routing would make of it on a simulated fleet, ending in
 * a verdict (enable / skip) with the figures and the rule behind it. Loaded
 * by bin/prefix-gateway.mjs through tsx; returns an exit code so tests can
 * call it in-process.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import type { CliIO } from "../cli";
import {
  countFlag,
  FLEET_OPTIONS,
  failure,
  parseFlagsAndArgs,
  positiveFlag,
  seedFlag,
  UsageError,
} from "../flags";
import { DEFAULT_ENGINE_CONFIG } from "../model/engine-model";
import { analyze } from "./analyze";
import { DEFAULT_SEARCH_RUNS, DEFAULT_SLO_TTFT_P99_MS, SLO_PREFILL_HEADROOM } from "./fleet-estimate";
import { type ProgressSink, progressBar } from "./progress";
import { renderText, skippedNote, toJson } from "./render";
import { DEFAULT_WINDOW_REQUESTS } from "./sim-window";
import { VERDICT_RULE } from "./verdict";

export const DEFAULT_BACKENDS = 8;
export const DEFAULT_TABLE_MB = 256;
export const DEFAULT_TOP = 10;

export const USAGE = `usage: prefix-gateway analyze <requests.jsonl | -> [options]

Measures how much of your prompt traffic repeats a prefix already seen (an
unbounded cache: overall, per tenant, by length, the most reused prefixes),
then simulates a fleet under prefix_aware and least_outstanding routing and
says whether prefix-aware routing pays: enable or skip.

Input, one JSON record after another, the format detected per record ("-": stdin):
  OpenAI request logs  {"timestamp", "model", "messages" | "prompt", "max_tokens", "prompt_cache_key"}
  Mooncake traces      {"timestamp" (ms), "input_length", "output_length", "hash_ids"}
  the gateway's log    what \`wrangler tail --format json\` prints (pretty-printed events), or the
                       request lines alone: prefix digests, never prompt text
  Malformed records are counted and reported, never fatal.

Fleet estimate:
  --backends N          instances (default ${DEFAULT_BACKENDS})
  --kv-tokens T         KV-cache capacity per instance, tokens (default ${DEFAULT_ENGINE_CONFIG.kvCacheTokens}:
                        Llama-3.1-8B on one H100 under vLLM)
  --slo-ttft-p99-ms MS  TTFT p99 target for "requests per instance at the SLO" (default ${DEFAULT_SLO_TTFT_P99_MS},
                        an interactive chat budget, raised to ${SLO_PREFILL_HEADROOM} × the uncached prefill time
                        of the p99 prompt on one instance when the log's prompts are too long for it)
  --sim-requests N      the simulator replays the first N requests of the input (default ${DEFAULT_WINDOW_REQUESTS})
  --search-runs N       simulator runs per policy to find its rate at the SLO (default ${DEFAULT_SEARCH_RUNS})
  --seed S              seed of the routers' randomness (default 1)
Memory and output:
  --table-mb M          memory for the set of seen prefix keys (default ${DEFAULT_TABLE_MB}: 12.6 M keys); exact
                        until full, then it keeps the most recently used keys and reuse from farther
                        back goes uncounted (the report says so)
  --top K               rows of the tenant and prefix tables (default ${DEFAULT_TOP})
  --json                print one JSON object instead of the report
  -h, --help            this help

Verdict rule: ${VERDICT_RULE}.
`;

const stdio: CliIO = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
};

const OPTIONS = {
  backends: FLEET_OPTIONS.backends,
  "kv-tokens": FLEET_OPTIONS["kv-tokens"],
  seed: FLEET_OPTIONS.seed,
  help: FLEET_OPTIONS.help,
  "slo-ttft-p99-ms": { type: "string" },
  "sim-requests": { type: "string" },
  "search-runs": { type: "string" },
  "table-mb": { type: "string" },
  top: { type: "string" },
  json: { type: "boolean" },
} as const;

async function open(path: string): Promise<{ input: Readable; bytes?: number }> {
  if (path === "-") return { input: process.stdin };
  const s = await stat(path);
  if (!s.isFile()) throw new Error("not a file");
  return { input: createReadStream(path, { highWaterMark: 1 << 20 }), bytes: s.size };
}

export async function analyzeCommand(
  argv: string[],
  io: CliIO = stdio,
  terminal: ProgressSink = process.stderr,
): Promise<number> {
  try {
    const { values, positionals } = parseFlagsAndArgs(argv, OPTIONS, 1);
    if (values.help) {
      io.out(USAGE);
      return 0;
    }
    const path = positionals[0];
    if (path === undefined)
      throw new UsageError("the request log to analyze is required (a file, or - for stdin)");
    const slo = values["slo-ttft-p99-ms"];
    const opts = {
      backends: countFlag("backends", values.backends, DEFAULT_BACKENDS),
      kvTokens: positiveFlag("kv-tokens", values["kv-tokens"], DEFAULT_ENGINE_CONFIG.kvCacheTokens),
      seed: seedFlag(values.seed),
      ...(slo !== undefined ? { sloTtftP99Ms: positiveFlag("slo-ttft-p99-ms", slo) } : {}),
      windowRequests: countFlag("sim-requests", values["sim-requests"], DEFAULT_WINDOW_REQUESTS),
      searchRuns: countFlag("search-runs", values["search-runs"], DEFAULT_SEARCH_RUNS),
      tableBytes: positiveFlag("table-mb", values["table-mb"], DEFAULT_TABLE_MB) * 2 ** 20,
      top: countFlag("top", values.top, DEFAULT_TOP),
    };
    let source: { input: Readable; bytes?: number };
    try {
      source = await open(path);
    } catch (e) {
      io.err(
        `prefix-gateway analyze: cannot read "${path}": ${e instanceof Error ? e.message : String(e)}\n`,
      );
      return 1;
    }
    const a = await analyze(source.input, {
      ...opts,
      name: path,
      progress: progressBar(terminal),
      ...(source.bytes !== undefined ? { totalBytes: source.bytes } : {}),
    });
    if (a.requests === 0) {
      const why = a.malformedSamples.length > 0 ? `; ${a.malformedSamples.join("; ")}` : "";
      const skipped = a.skippedLines > 0 ? `\n  ${skippedNote(a)}` : "";
      io.err(
        `prefix-gateway analyze: no request in "${path}" (${a.malformed} malformed, ${a.ignored} ignored, ` +
          `${a.skippedLines} lines not JSON skipped${why})${skipped}\n`,
      );
      return 1;
    }
    io.out(values.json ? `${JSON.stringify(toJson(a))}\n` : renderText(a, path));
    return 0;
  } catch (e) {
    return failure(e, "prefix-gateway analyze", USAGE, io.err);
  }
}
