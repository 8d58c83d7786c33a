import { describe, expect, it } from "vitest";
import { EngineMetricsReader, readEngineMetrics } from "./engine-metrics";

const MODEL = 'model_name="meta-llama/Llama-3.1-8B-Instruct"';

/**
 * /metrics as vLLM V1 serves it through prometheus_client (loggers.py's
 * PrometheusStatLogger, labelnames model_name then engine): the process
 * metrics first, then the scheduler gauges, the pre-0.9 names beside the new
 * ones, counters with their _total and _created series, histograms. Two
 * engines (data parallel), so every vLLM family has two series.
 */
function vllmExposition(o: {
  running: [string, string];
  kv: [string, string];
  waiting?: [string, string];
}): string {
  const two = (name: string, v: [string, string], extra = "") =>
    [0, 1].map((e) => `${name}{${MODEL},engine="${e}"${extra}} ${v[e]}`).join("\n");
  const waiting = o.waiting ?? ["1.0", "0.0"];
  return `# HELP python_gc_objects_collected_total Objects collected during gc
# TYPE python_gc_objects_collected_total counter
python_gc_objects_collected_total{generation="0"} 13987.0
python_gc_objects_collected_total{generation="1"} 2210.0
# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 4.1e+09
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
${two("vllm:num_requests_running", o.running)}
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
${two("vllm:num_requests_waiting", waiting)}
# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use vllm:kv_cache_usage_perc instead.
# TYPE vllm:gpu_cache_usage_perc gauge
${two("vllm:gpu_cache_usage_perc", ["0.9", "0.9"])}
# HELP vllm:gpu_prefix_cache_queries_total GPU prefix cache queries, in terms of number of queriedtokens. DEPRECATED: Use vllm:prefix_cache_queries instead.
# TYPE vllm:gpu_prefix_cache_queries_total counter
${two("vllm:gpu_prefix_cache_queries_total", ["1.0", "1.0"])}
# HELP vllm:gpu_prefix_cache_queries_created GPU prefix cache queries, in terms of number of queriedtokens. DEPRECATED: Use vllm:prefix_cache_queries instead.
# TYPE vllm:gpu_prefix_cache_queries_created gauge
${two("vllm:gpu_prefix_cache_queries_created", ["1.7531e+09", "1.7531e+09"])}
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
${two("vllm:kv_cache_usage_perc", o.kv)}
# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.
# TYPE vllm:prefix_cache_queries_total counter
${two("vllm:prefix_cache_queries_total", ["120000.0", "80000.0"])}
# HELP vllm:prefix_cache_queries_created Prefix cache queries, in terms of number of queried tokens.
# TYPE vllm:prefix_cache_queries_created gauge
${two("vllm:prefix_cache_queries_created", ["1.7531e+09", "1.7531e+09"])}
# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.
# TYPE vllm:prefix_cache_hits_total counter
${two("vllm:prefix_cache_hits_total", ["60000.0", "20000.0"])}
# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_total counter
${two("vllm:num_preemptions_total", ["0.0", "0.0"])}
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
${two("vllm:time_to_first_token_seconds_bucket", ["3.0", "2.0"], ',le="0.001"')}
${two("vllm:time_to_first_token_seconds_bucket", ["42.0", "40.0"], ',le="+Inf"')}
${two("vllm:time_to_first_token_seconds_count", ["42.0", "40.0"])}
${two("vllm:time_to_first_token_seconds_sum", ["NaN", "3.5"])}
`;
}

/** SGLang's /metrics (collector.py): scheduler gauges, then the tokenizer's counters. */
const SGLANG = `# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{engine_type="unified",model_name="Qwen/Qwen2.5-7B-Instruct",pp_rank="0",tp_rank="0"} 5.0
# HELP sglang:num_used_tokens The number of used tokens.
# TYPE sglang:num_used_tokens gauge
sglang:num_used_tokens{engine_type="unified",model_name="Qwen/Qwen2.5-7B-Instruct",pp_rank="0",tp_rank="0"} 41000.0
# HELP sglang:token_usage The token usage.
# TYPE sglang:token_usage gauge
sglang:token_usage{engine_type="unified",model_name="Qwen/Qwen2.5-7B-Instruct",pp_rank="0",tp_rank="0"} 0.31
# HELP sglang:gen_throughput The generation throughput (token/s).
# TYPE sglang:gen_throughput gauge
sglang:gen_throughput{engine_type="unified",model_name="Qwen/Qwen2.5-7B-Instruct",pp_rank="0",tp_rank="0"} 812.4
# HELP sglang:num_queue_reqs The number of requests in the waiting queue.
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{engine_type="unified",model_name="Qwen/Qwen2.5-7B-Instruct",pp_rank="0",tp_rank="0"} 2.0
# HELP sglang:cache_hit_rate The prefix cache hit rate.
# TYPE sglang:cache_hit_rate gauge
sglang:cache_hit_rate{engine_type="unified",model_name="Qwen/Qwen2.5-7B-Instruct",pp_rank="0",tp_rank="0"} NaN
# HELP sglang:prompt_tokens_total Number of prefill tokens processed.
# TYPE sglang:prompt_tokens_total counter
sglang:prompt_tokens_total{model_name="Qwen/Qwen2.5-7B-Instruct"} 123456.0
# HELP sglang:cached_tokens_total Number of cached prompt tokens.
# TYPE sglang:cached_tokens_total counter
sglang:cached_tokens_total{model_name="Qwen/Qwen2.5-7B-Instruct"} 34567.0
`;

describe("readEngineMetrics", () => {
  it("reads vLLM: running and waiting summed over engines, KV use their mean (the new name over the old)", () => {
    const r = readEngineMetrics(vllmExposition({ running: ["3.0", "4.0"], kv: ["0.25", "0.35"] }));
    expect(r).toEqual({
      ok: true,
      reading: {
        engine: "vllm",
        running: 7,
        waiting: 1,
        kvUsage: 0.3,
        prefixQueryTokens: 200_000,
        prefixHitTokens: 80_000,
      },
    });
  });

  it("reads vLLM before 0.9 by its old names", () => {
    const old = `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{${MODEL}} 2.0
vllm:num_requests_waiting{${MODEL}} 0.0
vllm:gpu_cache_usage_perc{${MODEL}} 0.5
vllm:gpu_prefix_cache_queries_total{${MODEL}} 10.0
vllm:gpu_prefix_cache_hits_total{${MODEL}} 4.0
`;
    expect(readEngineMetrics(old)).toEqual({
      ok: true,
      reading: {
        engine: "vllm",
        running: 2,
        waiting: 0,
        kvUsage: 0.5,
        prefixQueryTokens: 10,
        prefixHitTokens: 4,
      },
    });
  });

  it("reads SGLang's names, NaN in a gauge it does not need notwithstanding", () => {
    expect(readEngineMetrics(SGLANG)).toEqual({
      ok: true,
      reading: {
        engine: "sglang",
        running: 5,
        waiting: 2,
        kvUsage: 0.31,
        prefixQueryTokens: 123_456,
        prefixHitTokens: 34_567,
      },
    });
  });

  it("refuses a reading whose needed gauge is NaN, or missing", () => {
    const nan = readEngineMetrics(vllmExposition({ running: ["3.0", "NaN"], kv: ["0.25", "0.35"] }));
    expect(nan).toEqual({ ok: false, reason: "vllm:num_requests_running is NaN" });
    const kvNan = readEngineMetrics(vllmExposition({ running: ["3.0", "1.0"], kv: ["NaN", "0.35"] }));
    expect(kvNan.ok).toBe(false);
    const noWaiting = SGLANG.split("\n")
      .filter((l) => !l.startsWith("sglang:num_queue_reqs"))
      .join("\n");
    expect(readEngineMetrics(noWaiting)).toEqual({ ok: false, reason: "sglang:num_queue_reqs is missing" });
  });

  it("finds nothing in an exposition of another server (llama.cpp's names) or in garbage", () => {
    const llamacpp = "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 1\n";
    expect(readEngineMetrics(llamacpp)).toEqual({ ok: false, reason: "no vLLM or SGLang metric found" });
    expect(readEngineMetrics("<html>not metrics</html>")).toEqual({
      ok: false,
      reason: "no vLLM or SGLang metric found",
    });
  });

  it("says it has everything as soon as the family after its last wanted one starts, before the histograms", () => {
    const lines = vllmExposition({ running: ["3.0", "4.0"], kv: ["0.25", "0.35"] }).split("\n");
    const reader = new EngineMetricsReader();
    const stop = lines.findIndex((l) => reader.line(l));
    expect(lines[stop]).toMatch(/^vllm:num_preemptions_total/);
    expect(reader.result().ok).toBe(true);
    // Without the counters it never stops early: a reading needs the whole text then.
    const gaugesOnly = new EngineMetricsReader();
    for (const l of SGLANG.split("\n").filter((x) => !x.includes("_tokens_total")))
      expect(gaugesOnly.line(l)).toBe(false);
    expect(gaugesOnly.result().ok).toBe(true);
  });

  it("caps KV use at 1 and refuses negative gauges", () => {
    const over = readEngineMetrics(vllmExposition({ running: ["1", "1"], kv: ["1.2", "1.0"] }));
    expect(over.ok && over.reading.kvUsage).toBe(1);
    expect(readEngineMetrics(vllmExposition({ running: ["-1", "0"], kv: ["0.1", "0.1"] })).ok).toBe(false);
  });
});
