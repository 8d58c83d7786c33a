/**
 * Gateway cost measured on the running thing: workerd or wrangler dev (the real Worker
 * and RouterDO in local workerd) in front of in-process emulators.
 *
 * - cold start: runtime spawn → ready, then the first request (the
 *   isolate builds its tokenizer lazily on first use) against warm ones;
 * - Worker CPU per request: CPU of the workerd processes (from /proc) over a
 *   batch of sequential requests ÷ requests — everything the gateway does
 *   (parse, validate, prefix keys, RouterDO RPC, proxying the stream);
 * - decisions per second: closed-loop clients as many as the machine takes,
 *   tiny prompts and one output token, so each request is little more than
 *   one route + one complete; CPU shares say what limits the rate.
 */

import { type Summary, summarize } from "../latency-summary";
import type { ArmConfig } from "./arms";
import { startEmulators, startGatewayOver } from "./arms";
import { corpusText, corpusTokens } from "./corpus";
import { bundleWorker, type Gateway, passthroughConfig } from "./gateway";
import { diffCpu, groupCpuByCommand } from "./proc-cpu";
import { streamRequest } from "./stream-client";

const KEY = "cost-gateway-key";
const CHAT = "/v1/chat/completions";

function chatBody(model: string, system: string, user: string, maxTokens: number): string {
  return JSON.stringify({
    model,
    messages: [
      { role: "system", content: system },
      { role: "user", content: user },
    ],
    max_tokens: maxTokens,
    stream: true,
    stream_options: { include_usage: true },
  });
}

export interface ColdStart {
  readonly readyMs: number;
  /** First request after ready (8k-token prompt, 1 output token), TTFT ms. */
  readonly firstTtftMs: number;
  /** Following requests of the same shape (unseen system prompts), TTFT ms. */
  readonly warmTtftMs: Summary;
}

export interface WorkerCpu {
  readonly label: string;
  readonly requests: number;
  /** CPU ms ÷ requests by process role: workerd:worker (Worker + RouterDO), workerd:proxy, node (wrangler). */
  readonly cpuMsPerRequest: Readonly<Record<string, number>>;
  readonly ttftMs: Summary;
}

export interface DecisionRate {
  readonly clients: number;
  readonly seconds: number;
  readonly completed: number;
  readonly failed: number;
  readonly perSecond: number;
  /** CPU used during the run, as a share of one core, per process kind. */
  readonly cpuCores: Readonly<Record<string, number>>;
  readonly latencyMs: Summary;
}

export interface GatewayCost {
  readonly cold: ColdStart;
  readonly cpu: readonly WorkerCpu[];
  readonly decisions: readonly DecisionRate[];
}

async function timedTtft(gw: Gateway, body: string, headers?: Record<string, string>): Promise<number> {
  const r = await streamRequest({
    url: `${gw.url}${CHAT}`,
    apiKey: KEY,
    body,
    timeoutMs: 60_000,
    ...(headers !== undefined ? { headers } : {}),
  });
  if (r.outcome !== "ok" || r.ttftMs === undefined)
    throw new Error(`request failed: ${r.status} ${r.error ?? ""}`);
  return r.ttftMs;
}

async function cpuBatch(
  gw: Gateway,
  label: string,
  bodies: readonly string[],
  headers?: Record<string, string>,
): Promise<WorkerCpu> {
  const before = groupCpuByCommand(gw.pgid);
  const ttft: number[] = [];
  for (const b of bodies) ttft.push(await timedTtft(gw, b, headers));
  const d = diffCpu(groupCpuByCommand(gw.pgid), before);
  const cpuMsPerRequest: Record<string, number> = {};
  for (const [role, ms] of Object.entries(d)) if (ms > 0) cpuMsPerRequest[role] = ms / bodies.length;
  return { label, requests: bodies.length, cpuMsPerRequest, ttftMs: summarize(ttft) };
}

async function decisionRate(
  gw: Gateway,
  model: string,
  clients: number,
  seconds: number,
): Promise<DecisionRate> {
  const url = `${gw.url}${CHAT}`;
  const before = groupCpuByCommand(gw.pgid);
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let completed = 0;
  let failed = 0;
  const latency: number[] = [];
  let seq = 0;
  const client = async (): Promise<void> => {
    while (performance.now() < end) {
      const n = seq++;
      // Distinct short prompts: every request is routed on its own keys.
      const body = chatBody(model, `Routing probe ${n % 997}.`, `Question ${n}.`, 1);
      const r = await streamRequest({ url, apiKey: KEY, body, timeoutMs: 30_000 });
      if (r.outcome === "ok") {
        completed++;
        latency.push(r.e2eMs);
      } else failed++;
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const wallS = (performance.now() - t0) / 1000;
  const d = diffCpu(groupCpuByCommand(gw.pgid), before);
  const self = process.cpuUsage(self0);
  const cpuCores: Record<string, number> = {
    "bench (client + emulators)": (self.user + self.system) / 1e6 / wallS,
  };
  for (const [comm, ms] of Object.entries(d)) cpuCores[comm] = ms / 1000 / wallS;
  return {
    clients,
    seconds: wallS,
    completed,
    failed,
    perSecond: completed / wallS,
    cpuCores,
    latencyMs: summarize(latency),
  };
}

export async function measureGatewayCost(
  cfg: ArmConfig,
  projectDir: string,
  opts: { readonly cpuRequests: number; readonly clients: readonly number[]; readonly seconds: number },
): Promise<GatewayCost> {
  const log = cfg.log ?? (() => {});
  const corpus = corpusTokens(projectDir);
  const bundle = await bundleWorker(projectDir);
  const emulators = await startEmulators(cfg);
  let gw: Gateway | undefined;
  try {
    const t0 = performance.now();
    gw = await startGatewayOver(emulators, cfg, {
      policy: "prefix_aware",
      apiKey: KEY,
      configPath: bundle.configPath,
      runtime: cfg.runtime,
    });
    const readyMs = performance.now() - t0;
    const unseen = (i: number): string =>
      chatBody(
        cfg.model,
        corpusText(corpus, 1000 + 7919 * i, 8064),
        corpusText(corpus, 50_000 + 131 * i, 128),
        1,
      );
    const firstTtftMs = await timedTtft(gw, unseen(0));
    const warm: number[] = [];
    for (let i = 1; i <= 10; i++) warm.push(await timedTtft(gw, unseen(i)));
    const cold = { readyMs, firstTtftMs, warmTtftMs: summarize(warm) };
    log(`  cold: ready ${readyMs.toFixed(0)} ms, first TTFT ${firstTtftMs.toFixed(1)} ms`);

    const n = opts.cpuRequests;
    const sharedSystem = corpusText(corpus, 3, 8064);
    const cpu = [
      await cpuBatch(
        gw,
        "8k tokens, system prompt seen",
        Array.from({ length: n }, (_, i) =>
          chatBody(cfg.model, sharedSystem, corpusText(corpus, 60_000 + 137 * i, 128), 1),
        ),
      ),
      await cpuBatch(
        gw,
        "8k tokens, unseen",
        Array.from({ length: n }, (_, i) => unseen(100 + i)),
      ),
      await cpuBatch(
        gw,
        "tiny prompt (~10 tokens)",
        Array.from({ length: n }, (_, i) => chatBody(cfg.model, "Be brief.", `Question ${i}.`, 1)),
      ),
    ];
    for (const c of cpu) log(`  cpu ${c.label}: ${JSON.stringify(c.cpuMsPerRequest)} ms/request`);
    const decisions: DecisionRate[] = [];
    for (const c of opts.clients) {
      const d = await decisionRate(gw, cfg.model, c, opts.seconds);
      log(`  decisions: ${c} clients → ${d.perSecond.toFixed(0)}/s (${d.failed} failed)`);
      decisions.push(d);
    }
    await gw.close();
    gw = undefined;
    // The same tiny requests through the null gateway: what the runtime costs by itself.
    const pass = await passthroughConfig(projectDir);
    try {
      gw = await startGatewayOver(emulators, cfg, {
        policy: "least_outstanding",
        apiKey: KEY,
        configPath: pass.configPath,
        runtime: cfg.runtime,
      });
      await timedTtft(gw, chatBody(cfg.model, "Be brief.", "Warm up.", 1), { "x-e2e-backend": "0" });
      cpu.push(
        await cpuBatch(
          gw,
          "tiny prompt through the null gateway (passthrough-worker.js)",
          Array.from({ length: n }, (_, i) => chatBody(cfg.model, "Be brief.", `Question ${i}.`, 1)),
          { "x-e2e-backend": "0" },
        ),
      );
      await gw.close();
      gw = undefined;
    } finally {
      await pass.dispose();
    }
    return { cold, cpu, decisions };
  } finally {
    await gw?.close();
    await Promise.allSettled(emulators.map((e) => e.close()));
    await bundle.dispose();
  }
}
