/**
 * A V8 CPU profile of the gateway's isolate inside workerd: the real Worker
 * and RouterDO, served by workerd alone with its inspector open, driven by
 * sequential streamed requests (4k-token prompts sharing a system prompt).
 * The profile is taken over the Chrome DevTools Protocol (Profiler domain)
 * on workerd's inspector socket; the report ranks functions by self time and
 * gives the inclusive time of the gateway's stages.
 *
 * A sampling profiler with the inspector attached slows the isolate, so its
 * milliseconds are larger than /proc's CPU figures (e2e-cost.md): read the
 * shares, not the absolute values.
 */

import type { EngineConfig } from "../../sim/model/types";
import { summarize } from "../latency-summary";
import { gatewayCostConfig, startEmulators, startGatewayOver } from "./arms";
import { corpusTokens, sharedSystemChatBodies } from "./corpus";
import { bundleWorker } from "./gateway";
import { freePort } from "./ports";
import { streamRequest } from "./stream-client";

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface ProfiledFunction {
  readonly name: string;
  /** Where it is defined ("index.js:LINE" in the bundle; "" for the runtime's natives). */
  readonly where: string;
  readonly msPerRequest: number;
}

export interface WorkerProfile {
  readonly requests: number;
  readonly promptTokens: number;
  readonly samplingIntervalUs: number;
  /** Sampled ms per request, idle excluded. */
  readonly busyMsPerRequest: number;
  readonly self: readonly ProfiledFunction[];
  /** Inclusive ms per request of the gateway's named stages (functions of src/ and durable-objects/). */
  readonly stages: Readonly<Record<string, number>>;
  readonly ttftMs: ReturnType<typeof summarize>;
}

/** The gateway's stages, by the function names the bundle keeps (wrangler bundles with keepNames). */
export const STAGES = [
  "requestContextMiddleware",
  "requireGatewayKeyMiddleware",
  "inference",
  "readInferenceBody",
  "prefixKeysForRequest",
  "routeVia",
  "callBackend",
  "pull",
  "completeLease",
  "emit",
  "route",
  "complete",
] as const;

/** Minimal CDP client over the inspector's WebSocket (Node 22's global WebSocket). */
async function cdp(url: string): Promise<{
  call: (method: string, params?: object) => Promise<unknown>;
  close: () => void;
}> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve(), { once: true });
    ws.addEventListener("error", () => reject(new Error(`inspector ${url}: connection failed`)), {
      once: true,
    });
  });
  let next = 0;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  ws.addEventListener("message", (ev) => {
    const m = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: { message: string } };
    if (m.id === undefined) return;
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error !== undefined) p?.reject(new Error(m.error.message));
    else p?.resolve(m.result);
  });
  return {
    call: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = ++next;
        pending.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

/** Self and inclusive sampled ms per function of a CPU profile. */
export function aggregate(profile: CpuProfile): {
  self: Map<string, { name: string; where: string; ms: number }>;
  inclusive: Map<string, number>;
  idleMs: number;
  totalMs: number;
} {
  const sampledUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    sampledUs.set(id, (sampledUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }

  const self = new Map<string, { name: string; where: string; ms: number }>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  let idleMs = 0;
  let totalMs = 0;
  for (const n of profile.nodes) {
    const ms = (sampledUs.get(n.id) ?? 0) / 1000;
    totalMs += ms;
    const name = n.callFrame.functionName || "(anonymous)";
    if (name === "(idle)") idleMs += ms;
    const file = n.callFrame.url.split("/").pop() ?? "";
    const where = file === "" ? "" : `${file}:${n.callFrame.lineNumber + 1}`;
    const key = `${name}@${where}`;
    const e = self.get(key) ?? { name, where, ms: 0 };
    e.ms += ms;
    self.set(key, e);
  }
  // Inclusive time per function name; a name already on the stack is not counted twice (recursion).
  const inclusive = new Map<string, number>();
  const walk = (id: number, onStack: ReadonlySet<string>): number => {
    const n = byId.get(id);
    if (n === undefined) return 0;
    const name = n.callFrame.functionName || "(anonymous)";
    const below = new Set(onStack).add(name);
    let ms = (sampledUs.get(id) ?? 0) / 1000;
    for (const c of n.children ?? []) ms += walk(c, below);
    if (!onStack.has(name)) inclusive.set(name, (inclusive.get(name) ?? 0) + ms);
    return ms;
  };
  const root = profile.nodes[0];
  if (root !== undefined) walk(root.id, new Set());
  return { self, inclusive, idleMs, totalMs };
}

export async function profileWorker(
  projectDir: string,
  opts: {
    readonly model: string;
    readonly engine: EngineConfig;
    readonly requests: number;
    readonly systemTokens: number;
    readonly samplingIntervalUs: number;
  },
): Promise<WorkerProfile> {
  const cfg = gatewayCostConfig(opts.model, opts.engine);
  const corpus = corpusTokens(projectDir);
  const body = sharedSystemChatBodies(corpus, opts.model, opts.systemTokens);
  const emulators = await startEmulators(cfg);
  const bundle = await bundleWorker(projectDir);
  const inspectorPort = await freePort();
  const gw = await startGatewayOver(emulators, cfg, {
    policy: "prefix_aware",
    apiKey: "profile-gateway-key",
    configPath: bundle.configPath,
    runtime: "workerd",
    inspectorPort,
  });
  const send = async (i: number): Promise<number> => {
    const r = await streamRequest({
      url: `${gw.url}/v1/chat/completions`,
      apiKey: "profile-gateway-key",
      body: body(i),
      timeoutMs: 30_000,
    });
    if (r.outcome !== "ok" || r.ttftMs === undefined)
      throw new Error(`profile request: ${r.status} ${r.error}`);
    return r.ttftMs;
  };
  try {
    for (let i = 0; i < 30; i++) await send(i); // JIT warm-up, memo filled, connections open
    const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as {
      webSocketDebuggerUrl: string;
    }[];
    const target = targets[0];
    if (target === undefined) throw new Error("workerd inspector lists no isolate");
    const client = await cdp(target.webSocketDebuggerUrl);
    try {
      await client.call("Profiler.enable");
      await client.call("Profiler.setSamplingInterval", { interval: opts.samplingIntervalUs });
      await client.call("Profiler.start");
      const ttft: number[] = [];
      for (let i = 0; i < opts.requests; i++) ttft.push(await send(1000 + i));
      const { profile } = (await client.call("Profiler.stop")) as { profile: CpuProfile };
      const { self, inclusive, idleMs, totalMs } = aggregate(profile);
      const n = opts.requests;
      const stages: Record<string, number> = {};
      for (const s of STAGES) stages[s] = (inclusive.get(s) ?? 0) / n;
      return {
        requests: n,
        promptTokens: opts.systemTokens + 128,
        samplingIntervalUs: opts.samplingIntervalUs,
        busyMsPerRequest: (totalMs - idleMs) / n,
        self: [...self.values()]
          .filter((e) => e.name !== "(idle)")
          .sort((a, b) => b.ms - a.ms)
          .slice(0, 25)
          .map((e) => ({ name: e.name, where: e.where, msPerRequest: e.ms / n })),
        stages,
        ttftMs: summarize(ttft),
      };
    } finally {
      client.close();
    }
  } finally {
    await gw.close();
    await bundle.dispose();
    await Promise.allSettled(emulators.map((e) => e.close()));
  }
}

const f3 = (x: number): string => x.toFixed(3);

export function profileSection(p: WorkerProfile): string[] {
  return [
    "## CPU profile of the gateway isolate in workerd",
    "",
    `V8 sampling profile (every ${p.samplingIntervalUs} µs, over workerd's inspector) of ${p.requests} sequential ` +
      `streamed requests, ${p.promptTokens}-token prompts whose system prompt the isolate has seen, 2 output ` +
      "tokens, prefix_aware, the Worker and the RouterDO in one workerd. The attached profiler slows the isolate: " +
      `read shares, not absolute values (busy ${f3(p.busyMsPerRequest)} sampled ms per request here vs the /proc ` +
      "CPU figures above).",
    "",
    "Inclusive sampled ms per request of the gateway's stages (RouterDO methods `route` / `complete` run in the same isolate):",
    "",
    "| stage | ms/request |",
    "| --- | --- |",
    ...Object.entries(p.stages).map(([k, v]) => `| ${k} | ${f3(v)} |`),
    "",
    "Top functions by self time:",
    "",
    "| function | where | ms/request |",
    "| --- | --- | --- |",
    ...p.self.map((e) => `| ${e.name.replaceAll("|", "\\|")} | ${e.where} | ${f3(e.msPerRequest)} |`),
    "",
  ];
}
