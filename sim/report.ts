/**
 * Reports of a simulator run: Markdown (command to reproduce, machine, every
 * figure per policy) and JSON (the SimReport as is, plus the same context).
 */

import { cpus, totalmem } from "node:os";
import { fmtMs, fmtNum, fmtPct, reproduceLines, table } from "./format";
import { kvAllocationOf } from "./model/engine-config";
import { noticeDelayText } from "./notice-delay";
import { isSimPolicy, readingsText, viewOf } from "./policies";
import { type RequestView, TAIL_COUNT_FACTORS } from "./request-view";
import type { SimReport } from "./run";
import { describeSecondClient } from "./second-client";
import { engineConfig, loadMaxOverMean } from "./simulator";

export interface ReportContext {
  readonly command: string;
  /** Which set the replayed data belongs to (eval-sets.ts describeSet). */
  readonly set: string;
  readonly note?: string;
}

export function machine(): string {
  const c = cpus();
  return `${c[0]?.model ?? "unknown CPU"} × ${c.length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
}

export function summaryRows(r: SimReport): string[][] {
  return r.policies.map((p) => [
    p.policy,
    fmtPct(p.hitRate),
    fmtPct(r.oracle.hitRate > 0 ? p.hitRate / r.oracle.hitRate : Number.NaN, 0),
    fmtMs(p.ttftP50Ms),
    fmtMs(p.ttftP90Ms),
    fmtMs(p.ttftP99Ms),
    fmtMs(p.e2eP50Ms),
    fmtMs(p.e2eP99Ms),
    fmtNum(p.outputTokensPerSec, 0),
    fmtNum(p.maxLoadRatio),
    fmtNum(loadMaxOverMean(p)),
    fmtNum(p.prefillGpuSeconds, 1),
  ]);
}

export const SUMMARY_HEAD = [
  "policy",
  "hit rate",
  "of oracle",
  "TTFT p50",
  "TTFT p90",
  "TTFT p99",
  "E2E p50",
  "E2E p99",
  "out tok/s",
  "maxLoadRatio",
  "max/mean in-flight",
  "prefill GPU-s",
] as const;

function keysText(view: RequestView, r: SimReport): string {
  return view.keys === "gateway"
    ? `the first ${r.prefixTokens} tokens' keys (the gateway's PREFIX_TOKENS)`
    : "every full block's keys (the whole prompt)";
}

function countText(view: RequestView, r: SimReport): string {
  return view.promptTokens === "gateway" ? `exact to ${r.prefixTokens}, estimated past` : "exact";
}

/** One paragraph on the output hint, one on prompt counts, then what each policy's router was given. */
export function inputLines(r: SimReport): string[] {
  const m = r.maxTokens;
  const c = r.promptCount;
  const rows = r.policies.map((p) => {
    const view = isSimPolicy(p.policy) ? viewOf(p.policy) : undefined;
    return [
      p.policy,
      view === undefined ? "?" : keysText(view, r),
      view === undefined ? "?" : countText(view, r),
      view === undefined ? "?" : view.output === "max-tokens" ? "max_tokens as sent" : "none",
      isSimPolicy(p.policy) ? readingsText(p.policy, r.fleet.scrapeMs ?? 0) : "?",
    ];
  });
  return [
    `Output hint: engines generate each answer's true length; routers that read max_tokens get it as clients ` +
      `send it, model \`${m.model.name}\`: ${m.model.summary}. Here: sent on ${fmtPct(m.sentShare)} of requests, ` +
      `where sent it totals ${fmtNum(m.sentOverTrue, 2)}× the true output tokens.`,
    "",
    `Prompt tokens: the gateway counts a prompt exactly up to its ${r.prefixTokens}-token window and as ` +
      `ceil(chars / 4) past it, modelled as ${fmtNum(TAIL_COUNT_FACTORS[0]!)}–${fmtNum(TAIL_COUNT_FACTORS[TAIL_COUNT_FACTORS.length - 1]!)}× ` +
      "the true count of the tokens past it, as on English developer text (sim/request-view.ts, " +
      `bench/results/token-estimate.md). Here: ${fmtPct(c.pastWindowShare)} of requests are longer than the window` +
      (c.pastWindowShare > 0
        ? `; on those the gateway's count totals ${fmtNum(c.countOverTrue, 3)}× the true one.`
        : "."),
    "",
    table(["policy", "keys", "prompt tokens", "output hint", "engine readings"], rows),
    "",
    `Traffic around the gateway (a second client): ${describeSecondClient(r.fleet.secondClient, r.fleet.backends)}.` +
      (r.fleet.secondClient !== undefined
        ? " Each policy's figures are those of the requests its router placed; the second client's are apart."
        : ""),
    ...(r.fleet.noticeDelay === undefined
      ? []
      : [
          "",
          `Notices (first token, completion) reach our policies' router: ${noticeDelayText(r.fleet.noticeDelay)} ` +
            "(sim/notice-delay.ts); the peers' routers hear them at the engine's instant.",
        ]),
  ];
}

export function renderMarkdown(r: SimReport, ctx: ReportContext): string {
  const eng = engineConfig(r.fleet, r.blockTokens);
  const out: string[] = [];
  out.push(`# Simulator: ${r.workload}, ${r.fleet.backends} backends`, "");
  out.push(...reproduceLines(ctx.command));
  out.push(
    `Machine: ${machine()}. Simulated in ${(r.simulateMs / 1000).toFixed(1)} s wall (all policies + oracle), keys hashed in ${(r.prepareMs / 1000).toFixed(1)} s.`,
    "",
  );
  out.push(`Set: ${ctx.set}.`, "");
  if (ctx.note !== undefined) out.push(ctx.note, "");
  out.push(
    `Workload: ${r.requests} requests (${r.malformed} malformed lines skipped), blocks of ${r.blockTokens} tokens.`,
    `Fleet: ${r.fleet.backends} × ${r.fleet.preset ?? "engine"} {kvCacheTokens ${eng.kvCacheTokens}, maxRunning ${eng.maxRunning}, prefill ${eng.prefillTokensPerSec} tok/s, decode step ${eng.decodeStepBaseMs} ms + ${eng.decodeStepPerSeqMs} ms/seq${eng.expertWeightsMs !== undefined ? ` + ${eng.expertWeightsMs} ms × experts touched` : ""}${kvAllocationOf(eng) === "incremental" ? ", KV allocated step by step with preemption (vLLM V1)" : ", KV reserved for prompt + output at admission, no preemption"}}, weights ${JSON.stringify(r.fleet.weights ?? "all 1")}, seed ${r.fleet.seed}.`,
    `Oracle (one pooled LRU of the fleet's ${r.fleet.backends * r.fleet.kvCacheTokens} tokens, no load limits): hit rate ${fmtPct(r.oracle.hitRate)}.`,
    "",
  );
  out.push("## What each router is given", "", ...inputLines(r), "");
  out.push("## Per policy", "", table(SUMMARY_HEAD, summaryRows(r)), "");
  if (r.policies.some((p) => p.preemptions !== undefined))
    out.push(
      `Preemptions (KV allocated step by step; every engine): ${r.policies.map((p) => `${p.policy} ${p.preemptions ?? 0}`).join(", ")}.`,
      "",
    );
  out.push(
    "hit rate = cached prompt tokens / prompt tokens (as engines report them); of oracle = hit rate ÷ oracle hit rate;",
    "maxLoadRatio = busiest backend's time-averaged in-flight ÷ (its weight share × fleet total); percentiles interpolate linearly.",
    "",
  );
  const around = r.policies.filter((p) => p.secondClient !== undefined);
  if (around.length > 0)
    out.push(
      "## The second client's requests (sent around the router)",
      "",
      table(
        ["policy", "requests", "hit rate", "TTFT p50", "TTFT p99"],
        around.map((p) => [
          p.policy,
          String(p.secondClient!.requests),
          fmtPct(p.secondClient!.hitRate),
          fmtMs(p.secondClient!.ttftP50Ms),
          fmtMs(p.secondClient!.ttftP99Ms),
        ]),
      ),
      "",
    );
  out.push(
    "## Route reasons",
    "",
    table(
      ["policy", "affinity", "ring", "spill", "fallback", "wall s"],
      r.policies.map((p) => [
        p.policy,
        String(p.reasons.affinity),
        String(p.reasons.ring),
        String(p.reasons.spill),
        String(p.reasons.fallback),
        fmtNum(p.wallMs / 1000, 2),
      ]),
    ),
    "",
  );
  const ids = r.fleet.ids ?? Array.from({ length: r.fleet.backends }, (_, i) => `b${i}`);
  out.push(
    "## Per backend: share of requests / time-averaged in-flight",
    "",
    table(
      ["policy", ...ids],
      r.policies.map((p) => [
        p.policy,
        ...ids.map((_, i) => `${fmtPct(p.requestShare[i]!, 1)} / ${fmtNum(p.inflightAvg[i]!, 1)}`),
      ]),
    ),
    "",
  );
  return out.join("\n");
}

export function renderJson(r: SimReport, ctx: ReportContext): string {
  return `${JSON.stringify({ command: ctx.command, set: ctx.set, machine: machine(), ...r }, null, 2)}\n`;
}
