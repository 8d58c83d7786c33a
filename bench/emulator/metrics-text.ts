/**
 * Prometheus text exposition of the engine's state under vLLM's metric names
 * (V1 engine: docs.vllm.ai "Production Metrics"), so scrapers written for
 * vLLM (llm-d's scorers, dashboards, our e2e bench) read the emulator as is.
 * Counters carry the `_total` suffix as prometheus_client exposes them.
 */
import type { EngineMetrics } from "../../sim/model/types";

export interface ServerCounters {
  /** Finished choices by finished_reason ("stop", "length", "abort"). */
  readonly finished: ReadonlyMap<string, number>;
}

function esc(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

export function renderMetrics(model: string, m: EngineMetrics, counters: ServerCounters): string {
  const labels = `engine="0",model_name="${esc(model)}"`;
  const lines: string[] = [];
  const metric = (name: string, type: "gauge" | "counter", help: string, value: number): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name}{${labels}} ${value}`);
  };
  metric("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", m.running);
  metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", m.waiting);
  metric(
    "vllm:kv_cache_usage_perc",
    "gauge",
    "KV-cache usage. 1 means 100 percent usage.",
    Number(m.kvUsage.toFixed(6)),
  );
  metric(
    "vllm:prefix_cache_queries_total",
    "counter",
    "Prefix cache queries, in terms of number of queried tokens.",
    m.prefixQueryTokens,
  );
  metric(
    "vllm:prefix_cache_hits_total",
    "counter",
    "Prefix cache hits, in terms of number of cached tokens.",
    m.prefixHitTokens,
  );
  metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", m.promptTokensTotal);
  metric(
    "vllm:generation_tokens_total",
    "counter",
    "Number of generation tokens processed.",
    m.generationTokensTotal,
  );
  lines.push(
    "# HELP vllm:request_success_total Count of successfully processed requests.",
    "# TYPE vllm:request_success_total counter",
  );
  for (const reason of ["stop", "length", "abort"]) {
    lines.push(
      `vllm:request_success_total{${labels},finished_reason="${reason}"} ${counters.finished.get(reason) ?? 0}`,
    );
  }
  return `${lines.join("\n")}\n`;
}
