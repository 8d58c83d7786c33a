/**
 * An analysis as the command prints it: a plain-text report (tables in the
 * simulator's Markdown style) or one JSON object whose leading fields are
 * the documented contract (README "Will it pay for my traffic?").
 */
import { fmtMs, fmtNum, fmtPct, table } from "../format";
import type { Analysis } from "./analyze";
import { BASELINE, OURS, type PolicyFigures } from "./fleet-estimate";
import type { LengthBucket } from "./shared-prefixes";
import { VERDICT_RULE } from "./verdict";

const int = (n: number): string => Math.round(n).toLocaleString("en-US");

function tokens(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)} k`;
  return int(n);
}

function bucketLabel(b: LengthBucket): string {
  if (b.toTokens === 1) return "none";
  return b.toTokens === undefined
    ? `${int(b.fromTokens)}+ tokens`
    : `${int(b.fromTokens)}–${int(b.toTokens - 1)} tokens`;
}

const tenantLabel = (t: string): string => (t === "" ? "(none)" : t);
/** A key as the gateway's digest writes it: the top 32 bits of a 53-bit chain key (digest keys already are). */
const keyHex = (k: number): string =>
  (k >= 2 ** 32 ? Math.floor(k / 2 ** 21) : k).toString(16).padStart(8, "0");

export function toJson(a: Analysis): object {
  const e = a.estimate;
  const p = a.prefixes;
  return {
    requests: a.requests,
    malformed: a.malformed,
    skippedLines: a.skippedLines,
    promptTokens: p.promptTokens,
    sharedPrefixShare: p.share,
    estimate:
      e === null
        ? null
        : {
            backends: e.backends,
            hitRate: e.hitRate,
            ttftP50ChangePct: e.ttftP50ChangePct,
            ttftP99ChangePct: e.ttftP99ChangePct,
            prefillGpuSecondsSavedPerHour: e.prefillGpuSecondsSavedPerHour,
            requestsPerInstanceAtSlo: e.requestsPerInstanceAtSlo,
            baselineHitRate: e.baselineHitRate,
            oracleHitRate: e.oracleHitRate,
            kvTokens: e.kvTokens,
            sloTtftP99Ms: e.sloTtftP99Ms,
            sloSource: e.sloSource,
            instancesSaved: e.instancesSaved,
            logRatePerSec: e.logRatePerSec,
            simulatedRequests: e.simulatedRequests,
            simulatorRuns: e.simulatorRuns,
            policies: e.policies,
          },
    verdict: a.verdict?.verdict ?? "skip",
    because: a.verdict?.because ?? ["no request in the input"],
    verdictRule: VERDICT_RULE,
    ignored: a.ignored,
    malformedSamples: a.malformedSamples,
    formats: a.formats,
    sharedPrefixTokens: p.sharedTokens,
    requestsWithSharedPrefix: p.requestsWithSharedPrefix,
    sharedPrefixLengths: p.lengths,
    tenants: p.tenants,
    topPrefixes: p.top.map((t) => ({ ...t, key: keyHex(t.key) })),
    keyTable: p.keyTable,
    readMs: a.readMs,
    simulateMs: a.simulateMs,
  };
}

function policyRows(e: NonNullable<Analysis["estimate"]>): string[][] {
  const cols: PolicyFigures[] = [e.policies[OURS], e.policies[BASELINE]];
  const capacity = (f: PolicyFigures): string =>
    f.capacityBound === "none"
      ? "0 (never met)"
      : `${f.capacityBound === "atLeast" ? "≥ " : ""}${fmtNum(f.requestsPerInstanceAtSlo)}`;
  return [
    ["KV-cache hit rate", ...cols.map((f) => fmtPct(f.hitRate))],
    ["TTFT p50", ...cols.map((f) => fmtMs(f.ttftP50Ms))],
    ["TTFT p99", ...cols.map((f) => fmtMs(f.ttftP99Ms))],
    ["prefill GPU-seconds (window)", ...cols.map((f) => fmtNum(f.prefillGpuSeconds, 1))],
    [`requests/s per instance, TTFT p99 ≤ ${fmtMs(e.sloTtftP99Ms)}`, ...cols.map(capacity)],
    [
      `instances for ${fmtNum(e.logRatePerSec)} requests/s`,
      ...cols.map((f) => (f.instancesAtLogRate === null ? "–" : String(f.instancesAtLogRate))),
    ],
  ];
}

/**
 * What the skipped lines were and what to do about them: a terminal's output (npm run dev) mixes wrangler's
 * lines with the gateway's JSON ones; they are passed over, and the clean sources are named.
 */
export function skippedNote(a: Pick<Analysis, "skippedLines" | "firstSkippedLine">): string {
  const first = a.firstSkippedLine !== undefined ? ` (first: line ${a.firstSkippedLine})` : "";
  return (
    `skipped ${int(a.skippedLines)} lines that are not JSON${first}: text around the log, as wrangler's own ` +
    `lines in npm run dev's output. For the gateway's lines alone: wrangler tail --format json, or grep '^{"msg":"request"'`
  );
}

export function renderText(a: Analysis, source: string): string {
  const p = a.prefixes;
  const out: string[] = [];
  const formats = Object.entries(a.formats)
    .filter(([, n]) => n > 0)
    .map(([f, n]) => `${f} ${int(n)}`)
    .join(", ");
  out.push(
    `${int(a.requests)} requests from ${source} (${formats || "none"}); ${int(a.malformed)} malformed, ` +
      `${int(a.ignored)} other events ignored; ${tokens(p.promptTokens)} prompt tokens over ` +
      `${a.logHours.toFixed(2)} h (${fmtNum(a.logRatePerSec)} requests/s).`,
  );
  for (const s of a.malformedSamples) out.push(`  malformed ${s}`);
  if (a.skippedLines > 0) out.push(`  ${skippedNote(a)}`);
  const kt = p.keyTable;
  out.push(
    "",
    "Shared prefixes, as one unbounded cache for the whole fleet would see them " +
      (kt.exact
        ? `(exact: all ${int(kt.keys)} prefix keys kept in ${fmtNum(kt.bytes / 2 ** 20, 0)} MiB)`
        : `(a lower bound: the key set filled its ${fmtNum(kt.maxBytes / 2 ** 20, 0)} MiB and remembers the ` +
          `${int(kt.capacity)} most recently used prefix keys at least; reuse from farther back is not counted)`) +
      ":",
    `  ${fmtPct(p.share)} of prompt tokens (${tokens(p.sharedTokens)}) are in a prefix an earlier request sent; ` +
      `${int(p.requestsWithSharedPrefix)} of ${int(p.requests)} requests reuse one.`,
    "",
    table(
      ["longest seen prefix", "requests", "share"],
      p.lengths.map((b) => [
        bucketLabel(b),
        int(b.requests),
        fmtPct(p.requests > 0 ? b.requests / p.requests : 0),
      ]),
    ),
  );
  if (p.tenants.some((t) => t.tenant !== ""))
    out.push(
      "",
      `Per tenant (${int(p.tenantCount)}${p.tenantCount > p.tenants.length ? `, the ${p.tenants.length} with the most prompt tokens` : ""}):`,
      table(
        ["tenant", "requests", "prompt tokens", "shared"],
        p.tenants.map((t) => [
          tenantLabel(t.tenant),
          int(t.requests),
          tokens(t.promptTokens),
          fmtPct(t.share),
        ]),
      ),
    );
  if (p.top.length > 0) {
    const previews = p.top.some((t) => t.preview !== undefined);
    out.push(
      "",
      "Most reused prefixes (requests: at least this many had it as their longest seen prefix; tokens saved = requests × length):",
      table(
        ["requests", "length", "tokens saved", "tenant", "key", ...(previews ? ["preview"] : [])],
        p.top.map((t) => [
          int(t.count - t.overcount),
          int(t.tokens),
          tokens((t.count - t.overcount) * t.tokens),
          tenantLabel(t.tenant),
          keyHex(t.key),
          ...(previews ? [t.preview ?? ""] : []),
        ]),
      ),
    );
  }
  const e = a.estimate;
  if (e !== null) {
    out.push(
      "",
      `Fleet estimate: ${e.backends} backends × ${int(e.kvTokens)} KV tokens, simulated on the first ` +
        `${int(e.simulatedRequests)} requests (${fmtNum(e.windowRatePerSec)} requests/s), ${e.simulatorRuns} simulator runs; ` +
        `TTFT p99 SLO ${fmtMs(e.sloTtftP99Ms)} (${e.sloSource === "flag" ? "--slo-ttft-p99-ms" : "default"}).`,
      "",
      table(["", OURS, BASELINE], policyRows(e)),
      "",
      `A pooled cache of the fleet's size could reach ${fmtPct(e.oracleHitRate)}. Prefill GPU-seconds saved per hour ` +
        `at ${fmtNum(e.logRatePerSec)} requests/s: ${fmtNum(e.prefillGpuSecondsSavedPerHour, 0)}` +
        (e.instancesSaved === null ? "." : `; instances saved at that rate: ${e.instancesSaved}.`),
    );
  }
  out.push("", `Verdict: ${a.verdict?.verdict ?? "skip"}`);
  for (const b of a.verdict?.because ?? ["no request in the input"]) out.push(`  - ${b}`);
  out.push(`Rule: ${VERDICT_RULE}.`, "");
  return out.join("\n");
}
