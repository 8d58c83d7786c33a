/**
 * /metrics: every pool's snapshot in the Prometheus text exposition format
 * (version 0.0.4): one HELP and one TYPE line per family, then its samples;
 * names in base units with `_total` for counters and `_seconds` for times;
 * label values escaped (backslash, double quote, newline). Labels: `model`
 * (the pool), `backend`, `arm` and `policy` (A/B arms), `reason`.
 */
import type { ArmSnapshot, HistogramData, PoolSnapshot } from "./pool-snapshot";
import { LATENCY_BUCKETS_SECONDS } from "./pool-snapshot";

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

type Labels = Readonly<Record<string, string>>;
type Kind = "counter" | "gauge" | "histogram";

function escapeLabel(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

function num(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "+Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(v);
}

/** Collects samples per family, so each family's lines stay together under one HELP/TYPE. */
class Exposition {
  private readonly families = new Map<string, { help: string; kind: Kind; lines: string[] }>();

  family(name: string, kind: Kind, help: string): string[] {
    let f = this.families.get(name);
    if (f === undefined) {
      f = { help, kind, lines: [] };
      this.families.set(name, f);
    }
    return f.lines;
  }

  sample(name: string, kind: Exclude<Kind, "histogram">, help: string, labels: Labels, value: number): void {
    this.family(name, kind, help).push(`${name}${labelText(labels)} ${num(value)}`);
  }

  histogram(name: string, help: string, labels: Labels, h: HistogramData): void {
    const lines = this.family(name, "histogram", help);
    let cumulative = 0;
    LATENCY_BUCKETS_SECONDS.forEach((le, i) => {
      cumulative += h.counts[i] ?? 0;
      lines.push(`${name}_bucket${labelText({ ...labels, le: String(le) })} ${cumulative}`);
    });
    cumulative += h.counts[LATENCY_BUCKETS_SECONDS.length] ?? 0;
    lines.push(`${name}_bucket${labelText({ ...labels, le: "+Inf" })} ${cumulative}`);
    lines.push(`${name}_sum${labelText(labels)} ${num(h.sumSeconds)}`);
    lines.push(`${name}_count${labelText(labels)} ${cumulative}`);
  }

  text(): string {
    const out: string[] = [];
    for (const [name, f] of this.families) {
      out.push(`# HELP ${name} ${f.help}`, `# TYPE ${name} ${f.kind}`, ...f.lines);
    }
    return `${out.join("\n")}\n`;
  }
}

const P = "prefix_gateway";

function arm(e: Exposition, model: string, a: ArmSnapshot): void {
  const l = { model, arm: a.arm, policy: a.policy };
  for (const [reason, n] of Object.entries(a.reasons))
    e.sample(
      `${P}_routed_requests_total`,
      "counter",
      "Routing decisions, by arm and route reason.",
      { ...l, reason },
      n,
    );
  for (const [backend, n] of Object.entries(a.backends))
    e.sample(
      `${P}_backend_routed_requests_total`,
      "counter",
      "Routing decisions, by arm and backend.",
      { ...l, backend },
      n,
    );
  e.sample(
    `${P}_completed_requests_total`,
    "counter",
    "Requests the backend answered, by arm.",
    l,
    a.completed,
  );
  e.sample(
    `${P}_failed_requests_total`,
    "counter",
    "Requests that failed (client aborts and retried attempts aside), by arm.",
    l,
    a.failed,
  );
  e.sample(
    `${P}_retried_attempts_total`,
    "counter",
    "Attempts that failed and were retried on another backend, by arm.",
    l,
    a.retried,
  );
  const h = a.hits;
  e.sample(
    `${P}_prompt_tokens_total`,
    "counter",
    "Prompt tokens (gateway count, as routing counted it: within the largest engine's KV) of completed requests with usage.",
    l,
    h.promptTokens,
  );
  e.sample(
    `${P}_reported_prompt_tokens_total`,
    "counter",
    "Prompt tokens as the engines counted them, same requests.",
    l,
    h.reportedPromptTokens,
  );
  e.sample(
    `${P}_reuse_available_tokens_total`,
    "counter",
    "Longest prefix any usable backend held at decision time (per the index), tokens.",
    l,
    h.available,
  );
  e.sample(
    `${P}_reuse_captured_tokens_total`,
    "counter",
    "Prefix expected cached on the chosen backend, tokens.",
    l,
    h.captured,
  );
  e.sample(
    `${P}_reuse_delivered_tokens_total`,
    "counter",
    "Cached tokens the engines reported (usage.prompt_tokens_details.cached_tokens).",
    l,
    h.delivered,
  );
  e.sample(
    `${P}_output_tokens_total`,
    "counter",
    "Completion tokens the engines reported.",
    l,
    a.outputTokens,
  );
  e.histogram(
    `${P}_ttft_seconds`,
    "Time to first token: backend call to first content, streamed requests.",
    l,
    a.ttftHistogram,
  );
  e.histogram(
    `${P}_request_duration_seconds`,
    "End-to-end time: request received to last byte.",
    l,
    a.e2eHistogram,
  );
}

/** The text of every pool (model → its snapshot; pools without a snapshot are left out). */
export function metricsText(pools: ReadonlyMap<string, PoolSnapshot>): string {
  const e = new Exposition();
  for (const [model, s] of pools) {
    for (const b of s.backends) {
      const l = { model, backend: b.id };
      e.sample(
        `${P}_backend_up`,
        "gauge",
        "1 while the backend is in rotation, 0 while ejected by outlier detection.",
        l,
        b.healthy ? 1 : 0,
      );
      e.sample(
        `${P}_backend_drained`,
        "gauge",
        "1 while an operator holds the backend out of new requests.",
        l,
        b.drained ? 1 : 0,
      );
      e.sample(
        `${P}_backend_inflight_requests`,
        "gauge",
        "Requests in flight on the backend (every arm).",
        l,
        b.inflight,
      );
      e.sample(
        `${P}_backend_consecutive_failures`,
        "gauge",
        "Consecutive backend faults (ejects at EJECT_AFTER_FAULTS).",
        l,
        b.consecutiveFailures,
      );
      // Why a held-out backend stays out that long (README "Health"): an alert on relapses > 0 finds a backend whose
      // /health says up while its requests fail, which backend_up alone shows only as flapping.
      e.sample(
        `${P}_backend_relapses`,
        "gauge",
        "Times in a row the backend failed again soon after its probes brought it back (each doubles its probe wait, up to 32x HEALTH_PROBE_SECONDS); 0 when none.",
        l,
        b.relapses ?? 0,
      );
      e.sample(
        `${P}_backend_probation_requests`,
        "gauge",
        "Good requests the backend still owes since it came back with relapses; until then its first fault holds it out again. 0 when on no probation.",
        l,
        b.probation ?? 0,
      );
      // Only while held out (ejected, or a cell's failing last backend watched).
      if (b.nextProbeAt !== undefined)
        e.sample(
          `${P}_backend_next_probe_timestamp_seconds`,
          "gauge",
          "While the backend is held out: when its next /health probe is due, Unix seconds.",
          l,
          b.nextProbeAt / 1000,
        );
      // Only once checked (BACKEND_CHECK_SECONDS on): an unchecked backend is neither good nor bad.
      if (b.check !== undefined)
        e.sample(
          `${P}_backend_check_ok`,
          "gauge",
          "1 when the backend's latest /v1/models check found it answering and listing the pool's model, else 0.",
          l,
          b.check.state === "ok" ? 1 : 0,
        );
    }
    const c = s.counters;
    const l = { model };
    e.sample(`${P}_retries_total`, "counter", "Requests retried on another backend.", l, c.retried);
    e.sample(
      `${P}_retries_refused_total`,
      "counter",
      "Retries the pool's retry budget refused.",
      l,
      c.retriesRefused,
    );
    e.sample(
      `${P}_shed_requests_total`,
      "counter",
      "Requests shed with a 429: every usable backend at its bound on requests in flight.",
      l,
      c.shed ?? 0,
    );
    e.sample(`${P}_ejections_total`, "counter", "Backends ejected by outlier detection.", l, c.ejections);
    e.sample(`${P}_restorations_total`, "counter", "Ejected backends restored.", l, c.restorations);
    e.sample(`${P}_expired_leases_total`, "counter", "Leases whose completion never arrived.", l, c.expired);
    for (const a of s.arms) arm(e, model, a);
    if (s.shadow !== undefined) {
      const sl = { model, policy: s.shadow.policy };
      e.sample(
        `${P}_shadow_routed_requests_total`,
        "counter",
        "Requests the shadow decided too.",
        sl,
        s.shadow.routed,
      );
      e.sample(
        `${P}_shadow_agreed_requests_total`,
        "counter",
        "Requests where the shadow chose the serving backend.",
        sl,
        s.shadow.agreed,
      );
      e.sample(
        `${P}_shadow_prompt_tokens_total`,
        "counter",
        "Prompt tokens of the requests the shadow's hit figure covers.",
        sl,
        s.shadow.promptTokens,
      );
      e.sample(
        `${P}_shadow_reuse_captured_tokens_total`,
        "counter",
        "Prefix the shadow expected cached on its choice, tokens.",
        sl,
        s.shadow.captured,
      );
    }
  }
  return e.text();
}
