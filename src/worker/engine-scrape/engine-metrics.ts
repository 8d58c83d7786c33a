/**
 * An inference engine's /metrics → the reading the router uses: requests
 * running and waiting, KV-cache use, and the prefix cache's query and hit
 * counters. Lines are fed one at a time (the body is read as a stream, see
 * fetch-metrics.ts), and the reader says when it has seen everything it
 * wants, so the rest of a long exposition need not be read.
 *
 * Names, from the engines' own code:
 * - vLLM V1 (vllm/v1/metrics/loggers.py, PrometheusStatLogger):
 *   vllm:num_requests_running, vllm:num_requests_waiting (gauges),
 *   vllm:kv_cache_usage_perc (gauge, 0..1), and the counters
 *   vllm:prefix_cache_queries / vllm:prefix_cache_hits, in tokens, which
 *   prometheus_client exposes with a `_total` suffix. Before 0.9 these were
 *   vllm:gpu_cache_usage_perc and vllm:gpu_prefix_cache_{queries,hits};
 *   they are read when the new names are absent.
 * - SGLang (python/sglang/srt/metrics/collector.py):
 *   sglang:num_running_reqs, sglang:num_queue_reqs, sglang:token_usage
 *   (gauges), and the tokenizer's counters sglang:prompt_tokens_total and
 *   sglang:cached_tokens_total for the prefix cache's queries and hits.
 *
 * Every series of a name counts, whatever its labels: an instance running
 * several engines (data parallel: vLLM's engine="0", "1", …) reports one
 * series each, and the instance's load is their sum; KV use is their mean
 * (each engine has its own cache of the same size). A reading needs the
 * running, waiting and KV-use gauges as finite numbers; the counters are
 * extra. The first engine whose gauges appear decides which names are read.
 */
import { parsePromLine, sampleName } from "./prometheus-text";

export type EngineKind = "vllm" | "sglang";

/** One reading of one instance. */
export interface EngineMetricsReading {
  readonly engine: EngineKind;
  readonly running: number;
  readonly waiting: number;
  /** Fraction of KV blocks in use, 0..1. */
  readonly kvUsage: number;
  /** Cumulative prompt tokens looked up in the prefix cache, when exposed. */
  readonly prefixQueryTokens?: number;
  /** Cumulative prompt tokens found there, when exposed. */
  readonly prefixHitTokens?: number;
}

type Field = "running" | "waiting" | "kvUsage" | "prefixQueryTokens" | "prefixHitTokens";

/** Per field, the names that carry it, preferred first. */
const NAMES: Readonly<Record<EngineKind, Readonly<Record<Field, readonly string[]>>>> = {
  vllm: {
    running: ["vllm:num_requests_running"],
    waiting: ["vllm:num_requests_waiting"],
    kvUsage: ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
    prefixQueryTokens: ["vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"],
    prefixHitTokens: ["vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"],
  },
  sglang: {
    running: ["sglang:num_running_reqs"],
    waiting: ["sglang:num_queue_reqs"],
    kvUsage: ["sglang:token_usage"],
    prefixQueryTokens: ["sglang:prompt_tokens_total"],
    prefixHitTokens: ["sglang:cached_tokens_total"],
  },
};

const FIELDS: readonly Field[] = ["running", "waiting", "kvUsage", "prefixQueryTokens", "prefixHitTokens"];
const REQUIRED: readonly Field[] = ["running", "waiting", "kvUsage"];

/** Name → [engine, field], for every name above. */
const FIELD_OF = new Map<string, readonly [EngineKind, Field]>();
for (const engine of ["vllm", "sglang"] as const)
  for (const field of FIELDS) for (const name of NAMES[engine][field]) FIELD_OF.set(name, [engine, field]);

interface Sum {
  total: number;
  series: number;
}

export type EngineMetricsResult =
  | { readonly ok: true; readonly reading: EngineMetricsReading }
  | { readonly ok: false; readonly reason: string };

export class EngineMetricsReader {
  private engine: EngineKind | undefined;
  private readonly sums = new Map<string, Sum>();
  /** The name of the last sample line, to tell when a family has ended. */
  private current: string | undefined;
  private done = false;

  /** Feeds one line; true once every wanted name has been read whole (the caller may stop). */
  line(raw: string): boolean {
    if (this.done) return true;
    const name = sampleName(raw);
    if (name === undefined) return false;
    // A family's series are contiguous: a new name after every wanted one means all were read whole.
    if (name !== this.current) {
      if (this.current !== undefined && this.complete()) {
        this.done = true;
        return true;
      }
      this.current = name;
    }
    const known = FIELD_OF.get(name);
    if (known === undefined) return false;
    const [engine] = known;
    if (this.engine === undefined) this.engine = engine;
    else if (engine !== this.engine) return false;
    const sample = parsePromLine(raw);
    if (sample === undefined) return false;
    const sum = this.sums.get(name) ?? { total: 0, series: 0 };
    sum.total += sample.value;
    sum.series++;
    this.sums.set(name, sum);
    return false;
  }

  /** The reading from everything fed so far. */
  result(): EngineMetricsResult {
    const engine = this.engine;
    if (engine === undefined) return { ok: false, reason: "no vLLM or SGLang metric found" };
    const values: Partial<Record<Field, number>> = {};
    for (const field of FIELDS) {
      const name = NAMES[engine][field].find((n) => this.sums.has(n));
      if (name === undefined) continue;
      const sum = this.sums.get(name)!;
      values[field] = field === "kvUsage" ? sum.total / sum.series : sum.total;
    }
    for (const field of REQUIRED) {
      const v = values[field];
      if (v === undefined) return { ok: false, reason: `${NAMES[engine][field][0]} is missing` };
      if (!Number.isFinite(v) || v < 0) return { ok: false, reason: `${NAMES[engine][field][0]} is ${v}` };
    }
    const counter = (f: Field): number | undefined => {
      const v = values[f];
      return v !== undefined && Number.isFinite(v) && v >= 0 ? v : undefined;
    };
    const queries = counter("prefixQueryTokens");
    const hits = counter("prefixHitTokens");
    return {
      ok: true,
      reading: {
        engine,
        running: values.running!,
        waiting: values.waiting!,
        kvUsage: Math.min(1, values.kvUsage!),
        ...(queries !== undefined ? { prefixQueryTokens: queries } : {}),
        ...(hits !== undefined ? { prefixHitTokens: hits } : {}),
      },
    };
  }

  /** Every name of the engine's five fields (their preferred names) has been seen. */
  private complete(): boolean {
    const engine = this.engine;
    if (engine === undefined) return false;
    return FIELDS.every((f) => this.sums.has(NAMES[engine][f][0]!));
  }
}

/** Reads a whole exposition at once (tests, tools). */
export function readEngineMetrics(text: string): EngineMetricsResult {
  const reader = new EngineMetricsReader();
  for (const line of text.split("\n")) if (reader.line(line)) break;
  return reader.result();
}
