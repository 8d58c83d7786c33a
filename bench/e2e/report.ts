/**
 * The e2e report: bench/results/e2e-<name>.json (everything) and .md (the
 * tables a reader needs, and the command that reproduces them).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { HintStats, MaxTokensModelName } from "../../sim/client-max-tokens";
import { reproduceLines } from "../../sim/format";
import type { Summary } from "../latency-summary";
import type { ArmResult } from "./arm-result";
import { type GatewayRuntime, RUNTIME_DESCRIPTION } from "./gateway";
import { describePoolState } from "./pool-counters";
import type { Prediction } from "./sim-prediction";

export interface E2eReport {
  readonly name: string;
  readonly command: string;
  readonly startedAt: string;
  readonly machine: string;
  readonly config: {
    readonly workload: string;
    readonly rate: number;
    readonly backends: number;
    readonly durationS: number;
    readonly speed: number;
    readonly seed: number;
    readonly model: string;
    /** How the gateway was served: workerd alone, or wrangler dev. */
    readonly runtime: GatewayRuntime;
    readonly requests: number;
    readonly promptTokensMean: number;
    readonly outputTokensMean: number;
    /** How the replay's clients set max_tokens (sim/client-max-tokens.ts), and what that gave. */
    readonly maxTokens: { readonly model: MaxTokensModelName; readonly summary: string } & HintStats;
    /** Which set the replayed requests belong to (sim/eval-sets.ts describeSet). */
    readonly set: string;
    readonly engine: Readonly<Record<string, number | string>>;
    /** The gateway's ENGINE_SCRAPE_MS (absent in reports from before it existed: off). */
    readonly scrapeMs?: number;
    /** Who sent requests around the gateway (sim/second-client.ts describeSecondClient). */
    readonly secondClient?: string;
  };
  readonly arms: readonly ArmResult[];
  readonly simulator?: Prediction;
  readonly notes: readonly string[];
}

/** An arm's figure minus the direct arm's, at p50 and p99 (wall ms). */
export interface VersusDirect {
  readonly arm: string;
  readonly p50: number;
  readonly p99: number;
}

function versusDirect(arms: readonly ArmResult[], pick: (a: ArmResult) => Summary): VersusDirect[] {
  const direct = arms.find((a) => a.arm === "direct");
  if (direct === undefined) return [];
  const d = pick(direct);
  return arms
    .filter((a) => a.arm !== "direct")
    .map((a) => ({ arm: a.arm, p50: pick(a).p50 - d.p50, p99: pick(a).p99 - d.p99 }));
}

/**
 * Gateway-added latency: time outside the backend (client TTFT minus the
 * emulator's own TTFT, per request) through the arm, minus the same without a
 * gateway. Placement and queueing sit inside the backend's span, so this is
 * the cost of the hop itself, whatever the arm's routing did.
 */
export function addedLatency(arms: readonly ArmResult[]): VersusDirect[] {
  return versusDirect(arms, (a) => a.outsideBackendMs);
}

/** TTFT difference from direct: the gateway's cost plus the effect of its routing. */
export function ttftVersusDirect(arms: readonly ArmResult[]): VersusDirect[] {
  return versusDirect(arms, (a) => a.ttftMs);
}

const f1 = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : "–");
const pct = (x: number): string => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : "–");

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

export function renderMarkdown(r: E2eReport): string {
  const c = r.config;
  const out: string[] = [];
  out.push(`# e2e: ${r.name}`, "");
  out.push(...reproduceLines(r.command, "sh"));
  out.push(
    `${r.startedAt} on ${r.machine}. Workload \`${c.workload}\`: ${c.requests} requests ` +
      `(mean ${f1(c.promptTokensMean)} prompt / ${f1(c.outputTokensMean)} output tokens), ` +
      (c.workload === "mooncake" || c.workload.startsWith("file:")
        ? `trace arrivals (model time ÷ ${c.speed}), `
        : `Poisson arrivals at ${c.rate}/s of model time, `) +
      `${c.backends} emulators at speed ×${c.speed}, ` +
      `${c.durationS} s window, seed ${c.seed}. Gateway served by ${RUNTIME_DESCRIPTION[c.runtime]}. Emulator engine: ` +
      Object.entries(c.engine)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ") +
      ".",
    "",
    `max_tokens as clients send it (the gateway's only output hint), model \`${c.maxTokens.model}\`: ` +
      `${c.maxTokens.summary}; sent on ${pct(c.maxTokens.sentShare)} of requests, where sent totalling ` +
      `${f1(c.maxTokens.sentOverTrue)}× the true output tokens. Each answer's true length reaches the emulator ` +
      "as `min_tokens`, which the gateway passes through unread.",
    "",
    `Set: ${c.set}.`,
    "",
  );
  if (c.secondClient !== undefined || (c.scrapeMs ?? 0) > 0)
    out.push(
      `Engine scrape (ENGINE_SCRAPE_MS): ${(c.scrapeMs ?? 0) > 0 ? `every ${c.scrapeMs} ms` : "off"}. ` +
        `Second client: ${c.secondClient ?? "none"}. The arms' figures are those of the requests the arm ` +
        "sent; the emulators' KV counters see every request, the second client's included.",
      "",
    );
  out.push("## Measured (wall ms; each arm on fresh emulators and a fresh RouterDO)", "");
  out.push(
    table(
      [
        "arm",
        "sent",
        "ok",
        "error",
        "lost",
        "TTFT p50",
        "p90",
        "p99",
        "E2E p50",
        "p90",
        "p99",
        "KV hit (emulators)",
        "hit (usage)",
        "send lag p99",
      ],
      r.arms.map((a) => [
        a.arm,
        String(a.sent),
        String(a.ok),
        String(a.errors),
        String(a.lost),
        f1(a.ttftMs.p50),
        f1(a.ttftMs.p90),
        f1(a.ttftMs.p99),
        f1(a.e2eMs.p50),
        f1(a.e2eMs.p90),
        f1(a.e2eMs.p99),
        pct(a.kv.hitRate),
        pct(a.reportedHitRate),
        f1(a.sendLagMs.p99),
      ]),
    ),
    "",
  );
  const around = r.arms.filter((a) => a.secondClient !== undefined);
  if (around.length > 0) {
    out.push("## The second client's requests (sent straight to emulators, around the gateway)", "");
    out.push(
      table(
        ["arm", "sent", "ok", "TTFT p50", "p90", "p99", "hit (usage)"],
        around.map((a) => {
          const s = a.secondClient!;
          return [
            a.arm,
            String(s.sent),
            String(s.ok),
            f1(s.ttftMs.p50),
            f1(s.ttftMs.p90),
            f1(s.ttftMs.p99),
            pct(s.reportedHitRate),
          ];
        }),
      ),
      "",
    );
  }
  const added = addedLatency(r.arms);
  if (added.length > 0) {
    const direct = r.arms.find((a) => a.arm === "direct")!;
    out.push("## Gateway-added latency (time outside the backend, arm minus direct, wall ms)", "");
    out.push(
      "Per request: client TTFT minus the serving emulator's own arrival-to-first-token time (recorded by " +
        "x-request-id). What remains is client, network and — through the gateway — the gateway's work and its " +
        "extra hop. Queueing and prefill are inside the emulator's span, so the arm's placement does not move it. " +
        `Without a gateway (direct) it is p50 ${f1(direct.outsideBackendMs.p50)} / p99 ${f1(direct.outsideBackendMs.p99)} ms.`,
      "",
    );
    out.push(
      table(
        ["arm", "outside p50", "p90", "p99", "added p50", "added p99", "timed requests"],
        r.arms
          .filter((a) => a.arm !== "direct")
          .map((a) => {
            const d = added.find((x) => x.arm === a.arm)!;
            const o = a.outsideBackendMs;
            return [a.arm, f1(o.p50), f1(o.p90), f1(o.p99), f1(d.p50), f1(d.p99), String(o.count)];
          }),
      ),
      "",
    );
    out.push("### TTFT minus direct (the gateway's cost plus the effect of its routing)", "");
    out.push(
      table(
        ["arm", "p50", "p99"],
        ttftVersusDirect(r.arms).map((a) => [a.arm, f1(a.p50), f1(a.p99)]),
      ),
      "",
    );
  }
  const failed = r.arms.filter((a) => a.errors + a.lost > 0);
  out.push("## Requests lost or failed", "");
  if (failed.length === 0) out.push("None: every request sent in every arm completed.", "");
  for (const a of failed) {
    out.push(
      `- ${a.arm}: ${a.errors} error, ${a.lost} lost — ${JSON.stringify(a.failures)}`,
      ...a.failureSamples.map((s) => `  - ${s}`),
    );
  }
  if (failed.length > 0) out.push("");
  if (r.simulator !== undefined && r.simulator.policies.length > 0) {
    out.push("## Simulator's prediction beside the measurement", "");
    out.push(
      `Same requests, same engine config, in model time. Measured TTFT is converted to model time ` +
        `(wall × speed ${c.speed}); gateway overhead gets multiplied with it, so at high speed it weighs more. ` +
        `Oracle hit rate (fleet capacity, perfect knowledge): ${pct(r.simulator.oracleHitRate)}.`,
      "",
    );
    const rows = r.simulator.policies.map((s) => {
      const m = r.arms.find((a) => a.arm === s.policy);
      return [
        s.policy,
        pct(s.hitRate),
        m ? pct(m.kv.hitRate) : "–",
        f1(s.ttftP50Ms),
        m ? f1(m.ttftMs.p50 * c.speed) : "–",
        f1(s.ttftP99Ms),
        m ? f1(m.ttftMs.p99 * c.speed) : "–",
      ];
    });
    out.push(
      table(
        [
          "policy",
          "hit (sim)",
          "hit (measured)",
          "TTFT p50 sim",
          "measured ×speed",
          "TTFT p99 sim",
          "measured ×speed",
        ],
        rows,
      ),
      "",
    );
  }
  out.push("## Balance (share of requests per backend) and route reasons", "");
  for (const a of r.arms) {
    const shares = Object.entries(a.backendShare)
      .sort(([x], [y]) => x.localeCompare(y))
      .map(([k, v]) => `${k} ${pct(v)}`)
      .join(", ");
    const routes = Object.entries(a.routes)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ");
    const pool = a.gatewayPool === undefined ? "" : `; RouterDO: ${describePoolState(a.gatewayPool)}`;
    out.push(
      `- ${a.arm}: ${shares}${routes ? `; routes: ${routes}` : ""}; peak in flight ${a.peakInflight}${pool}`,
    );
  }
  out.push("");
  if (r.notes.length > 0) out.push("## Notes", "", ...r.notes.map((n) => `- ${n}`), "");
  return out.join("\n");
}

export async function writeReport(basePath: string, r: E2eReport): Promise<void> {
  await mkdir(dirname(basePath), { recursive: true });
  await writeFile(`${basePath}.json`, `${JSON.stringify(r, null, 2)}\n`);
  await writeFile(`${basePath}.md`, renderMarkdown(r));
}
