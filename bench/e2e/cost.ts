/**
 * `npm run bench:e2e -- --cost`: the gateway's cost, profiled, written to
 * bench/results/e2e-cost.{md,json}. Targets (issue #4): prefix keys median
 * ≤ 1 ms (8k, system prompt seen) and ≤ 8 ms (8k unseen); RouterDO
 * route+complete ≤ 0.5 ms median at 16 backends; ≥ 2,000 decisions/s.
 */

import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { resolve } from "node:path";
import { reproduceLines } from "../../sim/format";
import { DEFAULT_ENGINE_CONFIG } from "../../sim/model/engine-model";
import type { E2eArgs } from "./args";
import { type DoRate, routerDoRates } from "./cost-do";
import { type GatewayCost, measureGatewayCost } from "./cost-gateway";
import { type PrefixCostRow, prefixKeysCost, type RouterCostRow, routerCost } from "./cost-local";
import { type GatewayRuntime, RUNTIME_DESCRIPTION } from "./gateway";
import { profileSection, profileWorker, type WorkerProfile } from "./profile-worker";

const f2 = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : "–");
const f3 = (x: number): string => (Number.isFinite(x) ? x.toFixed(3) : "–");

interface CostReport {
  readonly command: string;
  readonly startedAt: string;
  readonly machine: string;
  readonly loadAverage: readonly number[];
  /** How the gateway and the DO driver were served (gateway.ts GatewayRuntime). */
  readonly runtime: GatewayRuntime;
  readonly prefixKeys: readonly PrefixCostRow[];
  readonly router: readonly RouterCostRow[];
  readonly routerDo: readonly DoRate[];
  readonly gateway: GatewayCost;
  /** V8 profile of the isolate (workerd runtime only: its inspector is what we attach to). */
  readonly profile?: WorkerProfile;
}

function verdict(ok: boolean): string {
  return ok ? "met" : "**missed**";
}

function prefixSection(r: CostReport): string[] {
  const out = [
    "## Prefix keys (Worker CPU), per request",
    "",
    "`prefixKeysForRequest` (src/prefix/request-keys.ts) on a chat body: system prompt of N−128 tokens + a 128-token " +
      "question, natural text (package READMEs). Timed call by call under Node on the same module the Worker " +
      "runs (same V8): local workerd's clock ticks in whole ms, too coarse for sub-ms medians. *seen*: the " +
      "isolate memo holds the system prompt; *unseen*: a new system prompt every call. Only the first 8192 " +
      "tokens are keyed. CPU = process CPU time of the call (robust to other load on the machine).",
    "",
    "| prompt tokens | system prompt | p50 ms | p90 | p99 | CPU p50 ms | CPU p90 | blocks |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...r.prefixKeys.map(
      (p) =>
        `| ${p.promptTokens} | ${p.systemPrompt} | ${f3(p.ms.p50)} | ${f3(p.ms.p90)} | ${f3(p.ms.p99)} | ` +
        `${f3(p.cpuMs.p50)} | ${f3(p.cpuMs.p90)} | ${p.blocks} |`,
    ),
    "",
  ];
  const seen8 = r.prefixKeys.find((p) => p.promptTokens === 8192 && p.systemPrompt === "seen");
  const unseen8 = r.prefixKeys.find((p) => p.promptTokens === 8192 && p.systemPrompt === "unseen");
  if (seen8 && unseen8)
    out.push(
      `Targets: 8k seen p50 ${f3(seen8.ms.p50)} ms ≤ 1 ms: ${verdict(seen8.ms.p50 <= 1)}; ` +
        `8k unseen p50 ${f3(unseen8.ms.p50)} ms ≤ 8 ms: ${verdict(unseen8.ms.p50 <= 8)}.`,
      "",
    );
  return out;
}

function routerSection(r: CostReport): string[] {
  const out = [
    "## RouterDO route + complete",
    "",
    "`Router.route` + `Router.complete` (src/routing: what the RouterDO's RPC methods run besides a UUID and an " +
      "in-memory alarm check), steady state: 512-block (8k-token) prompts from 256 shared prefixes, 64 in flight; " +
      "timed under Node on the DO's own module.",
    "",
    "| backends | policy | p50 ms | p90 | p99 | CPU p50 ms | CPU p90 |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...r.router.map(
      (x) =>
        `| ${x.backends} | ${x.policy} | ${f3(x.ms.p50)} | ${f3(x.ms.p90)} | ${f3(x.ms.p99)} | ` +
        `${f3(x.cpuMs.p50)} | ${f3(x.cpuMs.p90)} |`,
    ),
    "",
  ];
  const r16 = r.router.find((x) => x.backends === 16 && x.policy === "prefix_aware");
  if (r16)
    out.push(`Target: 16 backends p50 ${f3(r16.ms.p50)} ms ≤ 0.5 ms: ${verdict(r16.ms.p50 <= 0.5)}.`, "");
  out.push(
    "### One RouterDO inside workerd, driven over RPC (no HTTP)",
    "",
    `bench/e2e/workerd/do-driver.js hosts the real RouterDO class (served by ${RUNTIME_DESCRIPTION[r.runtime]}) and calls route + complete ` +
      "(one decision = two RPCs, 16 backends, prefix_aware, 512-block prompts) from C concurrent callers in the " +
      "same isolate. CPU: the Worker-runtime workerd process (caller and DO together), from /proc. " +
      "*stub*: one for the whole run, or a fresh one per decision — what the gateway does, since a stub " +
      "cannot outlive the request that made it.",
    "",
    "| callers | stub | decisions | ms | decisions/s | ms per decision per caller | workerd CPU ms/decision |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...r.routerDo.map(
      (d) =>
        `| ${d.clients} | ${d.freshStub ? "fresh per decision" : "one"} | ${d.decisions} | ${d.ms.toFixed(0)} | ` +
        `${d.perSecond.toFixed(0)} | ${f3((d.ms / d.decisions) * d.clients)} | ${f3(d.workerdCpuMsPerDecision)} |`,
    ),
    "",
  );
  const best = (fresh: boolean): number =>
    Math.max(0, ...r.routerDo.filter((d) => d.freshStub === fresh).map((d) => d.perSecond));
  out.push(
    `Target ≥ 2,000 decisions/s, counted the way the gateway calls (a fresh stub per decision): ` +
      `best ${best(true).toFixed(0)}/s — ${verdict(best(true) >= 2000)} (one long-lived stub: ${best(false).toFixed(0)}/s).`,
    "",
  );
  return out;
}

function gatewaySection(g: GatewayCost, runtime: GatewayRuntime): string[] {
  const roles = [...new Set(g.cpu.flatMap((c) => Object.keys(c.cpuMsPerRequest)))].sort();
  return [
    `## Through the gateway served by ${RUNTIME_DESCRIPTION[runtime]}: HTTP end to end`,
    "",
    `Cold start: ${runtime === "wrangler" ? "`wrangler dev`" : "workerd"} ready after ${g.cold.readyMs.toFixed(0)} ms; first request (8k-token prompt, ` +
      `1 output token) TTFT ${f2(g.cold.firstTtftMs)} ms against warm p50 ${f2(g.cold.warmTtftMs.p50)} ms ` +
      "(the difference is the isolate's first-use set-up: tokenizer ranks, RouterDO hydration, first connections).",
    "",
    "CPU per request by process (from /proc, 10 ms ticks over the batch; sequential requests, 1 output token). " +
      "`workerd:worker` runs the Worker and the RouterDO" +
      (runtime === "wrangler"
        ? "; `workerd:proxy` and `node` are wrangler dev's own entry proxy and CLI (log forwarding), which production does not have"
        : "") +
      ". The null gateway row is the same runtime with a Worker that only forwards.",
    "",
    `| requests | ${roles.join(" | ")} | TTFT p50 ms |`,
    `| --- | ${roles.map(() => "---").join(" | ")} | --- |`,
    ...g.cpu.map(
      (c) =>
        `| ${c.label} ×${c.requests} | ${roles.map((k) => f2(c.cpuMsPerRequest[k] ?? 0)).join(" | ")} | ${f2(c.ttftMs.p50)} |`,
    ),
    "",
    "Decisions per second through the whole gateway over HTTP (closed-loop clients, distinct tiny prompts, " +
      "1 output token, streamed; each request is one route + one complete):",
    "",
    "| clients | s | completed | failed | requests/s | latency p50 / p99 ms | CPU (cores) |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...g.decisions.map(
      (d) =>
        `| ${d.clients} | ${d.seconds.toFixed(1)} | ${d.completed} | ${d.failed} | ${d.perSecond.toFixed(0)} | ` +
        `${f2(d.latencyMs.p50)} / ${f2(d.latencyMs.p99)} | ${Object.entries(d.cpuCores)
          .filter(([, v]) => v >= 0.005)
          .map(([k, v]) => `${k} ${v.toFixed(2)}`)
          .join(", ")} |`,
    ),
    "",
  ];
}

function render(r: CostReport): string {
  return [
    "# e2e: gateway cost",
    "",
    ...reproduceLines(r.command, "sh"),
    `${r.startedAt} on ${r.machine}; load average at start ${r.loadAverage.map((x) => x.toFixed(2)).join(" / ")} ` +
      "(the machine is shared: wall times include waiting for a core).",
    "",
    ...prefixSection(r),
    ...routerSection(r),
    ...gatewaySection(r.gateway, r.runtime),
    ...(r.profile !== undefined ? profileSection(r.profile) : []),
  ].join("\n");
}

export async function runCost(a: E2eArgs): Promise<void> {
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const projectDir = process.cwd();
  const loadAverage = loadavg();
  log("prefix keys (node, same module as the Worker)");
  const prefixKeys = prefixKeysCost(projectDir, [1024, 8192, 32768], 200);
  log("router route+complete (node, same module as the RouterDO)");
  const router = routerCost([4, 16, 64], ["prefix_aware", "least_outstanding"], 5000);
  log("RouterDO over RPC inside workerd");
  const routerDo = await routerDoRates(
    projectDir,
    [
      [1, 500, false],
      [16, 2000, false],
      [128, 4000, false],
      [1, 500, true],
      [16, 2000, true],
    ],
    a.runtime,
  );
  log(`through the gateway (${a.runtime})`);
  const gateway = await measureGatewayCost(
    {
      backends: a.backends,
      model: a.model,
      // Fast emulators: the gateway, not the model, must be the bottleneck.
      speed: Math.max(a.speed, 100),
      engine: DEFAULT_ENGINE_CONFIG,
      requestTimeoutMs: 30_000,
      runtime: a.runtime,
      log,
    },
    projectDir,
    { cpuRequests: 40, clients: [16, 64], seconds: Math.min(a.durationS, 15) },
  );
  let profile: WorkerProfile | undefined;
  if (a.runtime === "workerd") {
    log("CPU profile of the gateway isolate (workerd inspector)");
    profile = await profileWorker(projectDir, {
      model: a.model,
      engine: DEFAULT_ENGINE_CONFIG,
      requests: 300,
      systemTokens: 3968,
      samplingIntervalUs: 200,
    });
  }
  const c = cpus();
  const report: CostReport = {
    command: `npm run bench:e2e -- ${process.argv.slice(2).join(" ")}`,
    startedAt: new Date().toISOString(),
    machine: `${c.length} × ${c[0]?.model ?? "cpu"}, Node ${process.version}`,
    loadAverage,
    runtime: a.runtime,
    prefixKeys,
    router,
    routerDo,
    gateway,
    ...(profile !== undefined ? { profile } : {}),
  };
  // workerd alone is the headline; other runtimes get their own report beside it.
  const base = resolve(`bench/results/e2e-cost${a.runtime === "workerd" ? "" : `-${a.runtime}`}`);
  await mkdir(resolve("bench/results"), { recursive: true });
  await writeFile(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  const md = render(report);
  await writeFile(`${base}.md`, md);
  process.stdout.write(md);
}
