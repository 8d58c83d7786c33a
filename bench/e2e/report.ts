/**
 * The e2e report: bench/results/e2e-<name>.json (everything) and .md (the
 * tables a reader needs, and the command that reproduces them).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { ArmResult } from "./arm-result";
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
    readonly requests: number;
    readonly promptTokensMean: number;
    readonly outputTokensMean: number;
    readonly engine: Readonly<Record<string, number>>;
  };
  readonly arms: readonly ArmResult[];
  readonly simulator?: Prediction;
  readonly notes: readonly string[];
}

/** Gateway-added latency: an arm's TTFT minus the direct arm's, at p50 and p99 (wall ms). */
export interface AddedLatency {
  readonly arm: string;
  readonly p50: number;
  readonly p99: number;
}

export function addedLatency(arms: readonly ArmResult[]): AddedLatency[] {
  const direct = arms.find((a) => a.arm === "direct");
  if (direct === undefined) return [];
  return arms
    .filter((a) => a.arm !== "direct")
    .map((a) => ({
      arm: a.arm,
      p50: a.ttftMs.p50 - direct.ttftMs.p50,
      p99: a.ttftMs.p99 - direct.ttftMs.p99,
    }));
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
  out.push("Reproduce:", "", "```sh", r.command, "```", "");
  out.push(
    `${r.startedAt} on ${r.machine}. Workload \`${c.workload}\`: ${c.requests} requests ` +
      `(mean ${f1(c.promptTokensMean)} prompt / ${f1(c.outputTokensMean)} output tokens), ` +
      (c.workload === "mooncake" || c.workload.startsWith("file:")
        ? `trace arrivals (model time ÷ ${c.speed}), `
        : `Poisson arrivals at ${c.rate}/s of model time, `) +
      `${c.backends} emulators at speed ×${c.speed}, ` +
      `${c.durationS} s window, seed ${c.seed}. Emulator engine: ` +
      Object.entries(c.engine)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ") +
      ".",
    "",
  );
  out.push(
    "## Measured (wall ms through local workerd; each arm on fresh emulators and a fresh RouterDO)",
    "",
  );
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
  const added = addedLatency(r.arms);
  if (added.length > 0) {
    out.push("## Gateway-added TTFT (arm minus direct, wall ms)", "");
    out.push(
      "`least_outstanding` through the gateway routes like the direct arm's client-side balancer, so its " +
        "difference is the gateway's own cost (auth, parse, prefix keys, RouterDO round trip, proxying). " +
        "Other arms' differences also contain the effect of their routing.",
      "",
    );
    out.push(
      table(
        ["arm", "p50", "p99"],
        added.map((a) => [a.arm, f1(a.p50), f1(a.p99)]),
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
    out.push(`- ${a.arm}: ${shares}${routes ? `; routes: ${routes}` : ""}; peak in flight ${a.peakInflight}`);
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
