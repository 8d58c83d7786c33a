/**
 * One arm's raw records → the figures the report shows. Latencies are wall
 * ms as the client measured them; `modelScale` (= speed) converts them to the
 * model time the simulator predicts in.
 */

import { type Summary, summarize } from "../latency-summary";
import type { GatewayPoolState } from "./pool-counters";
import type { ReplayRecord, ReplayRun } from "./replay";
import type { E2eItem } from "./requests";

export interface KvCounters {
  /** Σ over emulators of prompt tokens looked up in the prefix cache. */
  readonly queryTokens: number;
  /** Σ over emulators of prompt tokens found there. */
  readonly hitTokens: number;
}

/** What the second client's requests (sent around the gateway) saw. */
export interface SecondClientResult {
  readonly sent: number;
  readonly ok: number;
  readonly ttftMs: Summary;
  /** Σ cached_tokens / Σ prompt_tokens of its answers. */
  readonly reportedHitRate: number;
}

export interface ArmResult {
  /** Routing policy through the gateway, or "direct". */
  readonly arm: string;
  readonly sent: number;
  readonly ok: number;
  readonly errors: number;
  readonly lost: number;
  /** "status:type" → count, for errors and lost requests ("0:lost" = no answer). */
  readonly failures: Readonly<Record<string, number>>;
  readonly failureSamples: readonly string[];
  /** Wall ms, successful requests only. */
  readonly ttftMs: Summary;
  readonly e2eMs: Summary;
  /**
   * Per request, client TTFT minus the serving emulator's own arrival-to-first-
   * content time: what the request spent outside the backend (client, network,
   * gateway). Queueing and prefill are inside the backend's span, so placement
   * does not move this figure; arm minus direct is the gateway-added latency.
   */
  readonly outsideBackendMs: Summary;
  /** ms each send went out after its scheduled time (client lag; should stay ~0). */
  readonly sendLagMs: Summary;
  /** KV hit rate from the emulators' own counters (hitTokens / queryTokens). */
  readonly kv: KvCounters & { readonly hitRate: number };
  /** Hit rate from what responses reported (Σ cached_tokens / Σ prompt_tokens). */
  readonly reportedHitRate: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  /** Requests whose output token count differs from the workload's true length (sent as min_tokens). */
  readonly outputMismatches: number;
  /** Share of requests per backend id (from the gateway header or the direct pick). */
  readonly backendShare: Readonly<Record<string, number>>;
  /** Gateway route reasons (affinity / ring / spill / fallback) → count. */
  readonly routes: Readonly<Record<string, number>>;
  readonly wallMs: number;
  readonly peakInflight: number;
  /**
   * Per request, for analysis: [index, sentMs, status, outcome, ttftMs, e2eMs, backend, promptTokens,
   * cachedTokens, serverTtftMs, route, expectedCachedTokens] (the last two from the gateway's headers).
   */
  readonly records: readonly (readonly (string | number | null)[])[];
  /**
   * With a second client around the gateway: its requests, which the figures
   * above leave out (except the emulators' KV counters, which see everything).
   */
  readonly secondClient?: SecondClientResult;
  /** What the gateway's RouterDO counted over the arm (routing arms only; absent in older reports). */
  readonly gatewayPool?: GatewayPoolState;
}

function bump(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

export function armResult(
  arm: string,
  run: ReplayRun<E2eItem>,
  kv: KvCounters,
  backendOf: (r: ReplayRecord<E2eItem>) => string | undefined,
  serverTtftOf: (r: ReplayRecord<E2eItem>) => number | undefined = () => undefined,
): ArmResult {
  const failures: Record<string, number> = {};
  const samples: string[] = [];
  const shares: Record<string, number> = {};
  const routes: Record<string, number> = {};
  const ttft: number[] = [];
  const e2e: number[] = [];
  const outside: number[] = [];
  let ok = 0;
  let errors = 0;
  let lost = 0;
  let promptTokens = 0;
  let cachedTokens = 0;
  let outputTokens = 0;
  let outputMismatches = 0;
  for (const rec of run.records) {
    const r = rec.result;
    const backend = backendOf(rec);
    if (backend !== undefined) bump(shares, backend);
    if (r.route !== undefined) bump(routes, r.route);
    if (r.outcome === "ok") {
      ok++;
      if (r.ttftMs !== undefined) ttft.push(r.ttftMs);
      const server = serverTtftOf(rec);
      if (r.ttftMs !== undefined && server !== undefined) outside.push(r.ttftMs - server);
      e2e.push(r.e2eMs);
      promptTokens += r.promptTokens ?? 0;
      cachedTokens += r.cachedTokens ?? 0;
      outputTokens += r.completionTokens ?? 0;
      if (r.completionTokens !== Math.max(1, rec.item.request.outputTokens)) outputMismatches++;
      continue;
    }
    if (r.outcome === "error") errors++;
    else lost++;
    bump(failures, `${r.status}:${r.errorType ?? r.outcome}`);
    if (samples.length < 5) samples.push(`#${rec.index} ${r.status} ${r.error ?? ""}`.slice(0, 240));
  }
  const n = run.records.length;
  const frac = (m: Record<string, number>): Record<string, number> =>
    Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v / Math.max(1, n)]));
  return {
    arm,
    sent: n,
    ok,
    errors,
    lost,
    failures,
    failureSamples: samples,
    ttftMs: summarize(ttft),
    e2eMs: summarize(e2e),
    outsideBackendMs: summarize(outside),
    sendLagMs: summarize(run.records.map((r) => r.sentMs - r.item.atMs)),
    kv: { ...kv, hitRate: kv.queryTokens > 0 ? kv.hitTokens / kv.queryTokens : 0 },
    reportedHitRate: promptTokens > 0 ? cachedTokens / promptTokens : 0,
    promptTokens,
    outputTokens,
    outputMismatches,
    backendShare: frac(shares),
    routes,
    wallMs: run.wallMs,
    peakInflight: run.peakInflight,
    records: run.records.map((rec) => {
      const r = rec.result;
      const round = (x: number | undefined): number | null =>
        x === undefined ? null : Math.round(x * 10) / 10;
      return [
        rec.index,
        round(rec.sentMs),
        r.status,
        r.outcome,
        round(r.ttftMs),
        round(r.e2eMs),
        backendOf(rec) ?? null,
        r.promptTokens ?? null,
        r.cachedTokens ?? null,
        round(serverTtftOf(rec)),
        r.route ?? null,
        r.expectedCachedTokens ?? null,
      ];
    }),
  };
}
