/**
 * `prefix-gateway simulate`: replay a user's own trace (OpenAI request log or
 * Mooncake JSONL) on a simulated fleet under each policy and say what prefix
 * routing would buy. Loaded by bin/prefix-gateway.mjs through tsx.
 *
 * Returns an exit code instead of exiting, so tests can call it in-process.
 */
import { constants } from "node:buffer";
import { stat } from "node:fs/promises";
import {
  countFlag,
  ENGINE_USAGE,
  engineFlags,
  FLEET_OPTIONS,
  failure,
  maxTokensFlag,
  maxTokensHelp,
  parseFlags,
  policiesFlag,
  positiveFlag,
  sampleRateFlag,
  seedFlag,
  UsageError,
} from "./flags";
import { fmtMs, fmtPct, table } from "./format";
import { ALL_POLICIES } from "./policies";
import { DEFAULT_PREFIX_TOKENS, prepareWorkload } from "./prepare";
import { type ProgressLines, progressLines } from "./progress-lines";
import { SUMMARY_HEAD, summaryRows } from "./report";
import type { PolicyProgress, SimReport } from "./run";
import { runPolicies } from "./run";
import { sampleWorkloadFamilies } from "./workloads/sample-families";
import { readTraceFile, type TraceFileWorkload } from "./workloads/trace-file";
import type { Workload } from "./workloads/types";

/**
 * Past this many requests a whole-trace replay takes minutes and gigabytes (1.4 M short Mooncake
 * requests: 25 s of hashing, then about a minute and 1–3 GB resident per policy, red-team.md pass 8),
 * so simulate says so and names --max-requests before it starts.
 */
export const LARGE_TRACE_REQUESTS = 100_000;

export const USAGE = `usage: prefix-gateway simulate --trace <file.jsonl> --backends N [options]

Replays a request trace on a simulated fleet of vLLM-like engines under each
routing policy and reports KV-cache hit rate, TTFT and load balance.

  --trace FILE      JSONL, one request a line, formats detected per line:
                      OpenAI log: {"timestamp", "model", "messages" | "prompt", "max_tokens"}
                        timestamp: ISO-8601 string, epoch ms (>= 1e11), epoch s (>= 1e8),
                        or ms from the start of the log (< 1e8)
                      Mooncake:   {"timestamp" (ms), "input_length", "output_length", "hash_ids"}
                    malformed lines are counted and skipped; a regular file of at most
                    512 MiB (a longer log: head -n, or analyze, which streams it)
  --backends N      number of engines (required)
  --max-requests N  replay only the first N valid requests of the trace, in file order
                    (then sorted by arrival): the rest of the file is not read, so time
                    and memory stay bounded on a long trace (malformed lines are counted
                    in the part read). Without it every request is replayed under every
                    policy, one policy after another; past ${LARGE_TRACE_REQUESTS.toLocaleString("en-US")} requests simulate
                    says so before it starts. A run longer than 5 s prints its progress
                    on stderr (reading, hashing, requests replayed per policy) every 5 s
  --preset NAME     ${ENGINE_USAGE.preset}
  --kv-tokens T     ${ENGINE_USAGE.kvTokens}
  --kv-allocation A ${ENGINE_USAGE.kvAllocation}
  --speed X         replay X times faster than recorded (default 1)
  --policies LIST   comma list or "all" (default all): ${ALL_POLICIES.join(", ")}
  --seed S          seed of the routers' randomness and of --sample-families (default 1)
  --sample-families R
                    replay only the prefix families (requests sharing the key after the
                    prefix common to all requests) whose seeded hash falls below R, e.g.
                    0.25 or 1/4: spatially hashed sampling (SHARDS, Waldspurger et al.,
                    FAST'15) for a shorter replay of a long trace. Mooncake traces only
                    (OpenAI logs carry token ids, not keyed segments). The KV capacity is
                    NOT scaled for you: SHARDS preserves cache behaviour only if you also
                    scale it by R (--kv-tokens R x T), and --speed 1/R keeps the request rate
  ${maxTokensHelp(20)}
                    (an OpenAI log's own max_tokens are used as logged, under every model but exact)
  --json            print one JSON object instead of the table
  -h, --help        this help
`;

export interface CliIO {
  out(s: string): void;
  err(s: string): void;
}

const stdio: CliIO = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
};

export function toJson(r: SimReport, window?: JsonWindow): object {
  const policies: Record<string, object> = {};
  for (const p of r.policies)
    policies[p.policy] = {
      hitRate: p.hitRate,
      oracleHitRate: r.oracle.hitRate,
      ttftP50Ms: p.ttftP50Ms,
      ttftP90Ms: p.ttftP90Ms,
      ttftP99Ms: p.ttftP99Ms,
      e2eP50Ms: p.e2eP50Ms,
      e2eP99Ms: p.e2eP99Ms,
      maxLoadRatio: p.maxLoadRatio,
      outputTokensPerSec: p.outputTokensPerSec,
      prefillGpuSeconds: p.prefillGpuSeconds,
      requestShare: p.requestShare,
      inflightAvg: p.inflightAvg,
      reasons: p.reasons,
    };
  return {
    requests: r.requests,
    malformed: r.malformed,
    ...(window !== undefined ? { window } : {}),
    policies,
  };
}

/** How much of the trace --max-requests read, when it stopped before the end. */
export interface JsonWindow {
  readonly maxRequests: number;
  readonly linesRead: number;
  readonly bytesRead: number;
  readonly bytes: number;
}

function windowOf(w: TraceFileWorkload, maxRequests: number | undefined): JsonWindow | undefined {
  if (maxRequests === undefined || w.window === undefined) return undefined;
  return { maxRequests, linesRead: w.window.lines, bytesRead: w.window.bytesRead, bytes: w.window.bytes };
}

const count = (n: number): string => n.toLocaleString("en-US");
/** "812 B", "40 KiB", "3.2 MiB", "125 MiB". */
export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 2 ** 20) return `${(bytes / 1024).toFixed(0)} KiB`;
  const m = bytes / 2 ** 20;
  return `${m.toFixed(m < 10 ? 1 : 0)} MiB`;
}

/** Said once, before a whole-trace replay past LARGE_TRACE_REQUESTS; undefined for a window or a small trace. */
export function largeTraceNote(
  requests: number,
  policies: number,
  maxRequests: number | undefined,
): string | undefined {
  if (maxRequests !== undefined || requests <= LARGE_TRACE_REQUESTS) return undefined;
  return (
    `prefix-gateway simulate: replaying all ${count(requests)} requests under each of ${policies} ` +
    `polic${policies === 1 ? "y" : "ies"}, one after another: time and memory grow with the trace ` +
    `(progress every 5 s below). --max-requests N replays only the first N (e.g. --max-requests 20000, ` +
    "analyze's window).\n"
  );
}

/** The progress line of a policy run: which policy, how many of the requests have arrived. */
export function replayLabel(p: PolicyProgress): string {
  return (
    `${p.policy} (policy ${p.index + 1} of ${p.count}): ${count(p.sent)} of ${count(p.total)} requests ` +
    `replayed (${((p.sent / Math.max(1, p.total)) * 100).toFixed(0)}%)`
  );
}

/** "prefix_aware would cut p50 TTFT by X% ..." against the load balancer most fleets run today. */
export function verdict(r: SimReport): string {
  const ours = r.policies.find((p) => p.policy === "prefix_aware");
  const base =
    r.policies.find((p) => p.policy === "least_outstanding") ??
    r.policies.find((p) => p.policy === "round_robin") ??
    r.policies.find((p) => p.policy !== "prefix_aware");
  if (ours === undefined || base === undefined)
    return "Include prefix_aware and one other policy (e.g. least_outstanding) for a verdict.";
  const cut = (a: number, b: number): string => {
    const d = b > 0 ? (1 - a / b) * 100 : 0;
    return d >= 0 ? `cut ${d.toFixed(0)}%` : `raise by ${(-d).toFixed(0)}%`;
  };
  return (
    `Compared with ${base.policy}, prefix_aware would ${cut(ours.ttftP50Ms, base.ttftP50Ms)} of p50 TTFT ` +
    `(${fmtMs(base.ttftP50Ms)} → ${fmtMs(ours.ttftP50Ms)}), ${cut(ours.ttftP99Ms, base.ttftP99Ms)} of p99 TTFT ` +
    `(${fmtMs(base.ttftP99Ms)} → ${fmtMs(ours.ttftP99Ms)}) and move the KV-cache hit rate from ` +
    `${fmtPct(base.hitRate)} to ${fmtPct(ours.hitRate)} on this traffic (a pooled cache of the same ` +
    `size could reach ${fmtPct(r.oracle.hitRate)}), with the busiest backend at ${ours.maxLoadRatio.toFixed(2)}× ` +
    `its fair share of in-flight requests. Simulated engines, not measurements: use it to rank policies, ` +
    `then confirm with the end-to-end bench.`
  );
}

/**
 * Why the trace cannot be read, or undefined. simulate took regular files only, up to V8's longest
 * string, when it held the trace as one string: a device or a pipe (/dev/zero, `<(yes)`) was read
 * until that limit (~512 MiB, ~650 MB resident) and a larger file read whole, both to fail with V8's
 * bare "Invalid string length". It now reads in chunks, but still holds every request it replays,
 * and an endless line would still end in that error, so the bound on the input stays.
 */
export async function whyUnreadable(
  path: string,
  maxBytes = constants.MAX_STRING_LENGTH,
): Promise<string | undefined> {
  let s: Awaited<ReturnType<typeof stat>>;
  try {
    s = await stat(path);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : String((e as Error).message);
  }
  if (!s.isFile())
    return "not a regular file (simulate reads the whole trace: save a pipe's or a device's output to a file first)";
  if (s.size > maxBytes)
    return (
      `${(s.size / 2 ** 20).toFixed(0)} MiB, more than simulate can hold (${(maxBytes / 2 ** 20).toFixed(0)} MiB, ` +
      "the longest string the runtime makes): replay a part (head -n 100000 FILE > part.jsonl), or measure the " +
      "whole log with prefix-gateway analyze, which streams it"
    );
  return undefined;
}

export async function simulateCommand(
  argv: string[],
  io: CliIO = stdio,
  clock: () => number = () => performance.now(),
): Promise<number> {
  try {
    const values = parseFlags(argv, OPTIONS);
    if (values.help) {
      io.out(USAGE);
      return 0;
    }
    if (values.trace === undefined) throw new UsageError("--trace is required");
    const backends = countFlag("backends", values.backends);
    const engine = engineFlags(values.preset, values["kv-tokens"], values["kv-allocation"]);
    const speed = positiveFlag("speed", values.speed, 1);
    const seed = seedFlag(values.seed);
    const sampleRate = sampleRateFlag(values["sample-families"]);
    const policies = policiesFlag(values.policies);
    const maxTokens = maxTokensFlag(values["max-tokens"]);
    const maxRequests =
      values["max-requests"] === undefined ? undefined : countFlag("max-requests", values["max-requests"]);
    const unreadable = await whyUnreadable(values.trace);
    if (unreadable !== undefined) {
      io.err(`prefix-gateway simulate: cannot read trace file "${values.trace}": ${unreadable}\n`);
      return 1;
    }
    const progress: ProgressLines = progressLines(io.err, "prefix-gateway simulate", clock);
    const trace = values.trace;
    const w = await readTraceFile(trace, {
      speed,
      ...(maxRequests !== undefined ? { maxRequests } : {}),
      onProgress: (read, bytes, requests) =>
        progress.note(() => `reading ${trace}: ${size(read)} of ${size(bytes)}, ${count(requests)} requests`),
    });
    if (w.requests.length === 0) {
      io.err(
        `prefix-gateway simulate: no valid request in "${values.trace}" (${w.malformed} malformed lines${w.malformedSamples.length > 0 ? `; ${w.malformedSamples.join("; ")}` : ""})\n`,
      );
      return 1;
    }
    let replayed: Workload = w;
    let sampled = "";
    if (sampleRate !== undefined) {
      const s = sampleWorkloadFamilies(w, sampleRate, seed);
      replayed = s.workload;
      sampled = `, ${s.description}`;
    }
    const note = largeTraceNote(replayed.requests.length, policies.length, maxRequests);
    if (note !== undefined) io.err(note);
    const prepared = prepareWorkload(replayed, {
      prefixTokens: DEFAULT_PREFIX_TOKENS,
      maxTokens,
      seed,
      onProgress: (hashed, total) =>
        progress.note(() => `hashing the prompts' blocks: ${count(hashed)} of ${count(total)} requests`),
    });
    const report = runPolicies(prepared, { backends, seed, ...engine }, policies, undefined, undefined, (p) =>
      progress.note(() => replayLabel(p)),
    );
    const window = windowOf(w, maxRequests);
    if (values.json) {
      io.out(`${JSON.stringify(toJson(report, window))}\n`);
      return 0;
    }
    const windowed =
      window === undefined
        ? []
        : [
            `--max-requests ${window.maxRequests}: the first ${count(window.maxRequests)} requests in file order ` +
              `(lines 1–${count(window.linesRead)}, ${size(window.bytesRead)} of ${size(window.bytes)}); ` +
              "the rest of the file was not read.",
          ];
    const lines = [
      `${report.requests} requests from ${values.trace}${sampled} (${report.malformed} malformed lines skipped${w.malformedSamples.length > 0 ? `: ${w.malformedSamples.join("; ")}` : ""}), ${backends} backends × ${engine.preset} (${engine.kvCacheTokens} KV tokens), blocks of ${report.blockTokens} tokens.`,
      ...windowed,
      "",
      table(SUMMARY_HEAD, summaryRows(report)),
      "",
      `Our policies were given the keys of each prompt's first ${report.prefixTokens} tokens (what the gateway hashes) ` +
        `and max_tokens as clients send it (${maxTokens === "exact" ? "the true length" : `sent on ${fmtPct(report.maxTokens.sentShare)} of requests`}); ` +
        "the peers (sglang, llmd, dynamo, sagemaker) the whole prompt, as their own routers read it.",
      "",
      verdict(report),
      "",
    ];
    io.out(lines.join("\n"));
    return 0;
  } catch (e) {
    return failure(e, "prefix-gateway simulate", USAGE, io.err);
  }
}

const OPTIONS = {
  ...FLEET_OPTIONS,
  trace: { type: "string" },
  "max-requests": { type: "string" },
  json: { type: "boolean" },
} as const;
