/**
 * One arm of an e2e run, start to finish on this machine: fresh emulators
 * (clean KV caches), the gateway under wrangler dev with the arm's policy
 * (or nothing, for `direct`), a warm-up request, the open-loop replay, the
 * emulators' KV counters, and teardown — always, also on error.
 */

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { EngineConfig } from "../../sim/model/types";
import { type EmulatorFleet, startEmulatorFleet, startEmulatorsHere } from "../emulator/fleet";
import type { Emulator, EmulatorOptions } from "../emulator/server";
import { summarize } from "../latency-summary";
import { type ArmResult, armResult, type KvCounters, type SecondClientResult } from "./arm-result";
import { emulatorIds } from "./backend-ids";
import {
  type BackendEntry,
  type Gateway,
  type GatewayRuntime,
  passthroughConfig,
  type StartGatewayOptions,
  startGateway,
  type WorkerBundle,
} from "./gateway";
import { type GatewayPoolState, readPoolState } from "./pool-counters";
import { LeastOutstanding, type ReplayRecord, replayOpenLoop } from "./replay";
import type { E2eItem } from "./requests";
import { type RequestResult, streamRequest } from "./stream-client";

export interface ArmConfig {
  readonly backends: number;
  readonly model: string;
  readonly speed: number;
  readonly engine: EngineConfig;
  readonly requestTimeoutMs: number;
  readonly runtime: GatewayRuntime;
  /** wrangler config serving a frozen bundle (gateway.ts bundleWorker); default: the checkout's. */
  readonly configPath?: string;
  /** Gateway vars besides ROUTING_POLICY (PREFIX_TOKENS, BLOCK_TOKENS, ...). */
  readonly gatewayVars?: Readonly<Record<string, string>>;
  readonly log?: (line: string) => void;
  /**
   * A second client around the gateway: per item, the emulator it is sent to
   * straight (its own client, not the gateway), or −1 to go as the arm sends
   * (sim/second-client.ts secondClientTargets). The arm's figures are those
   * of the other requests; these are summarised apart (ArmResult.secondClient).
   */
  readonly around?: Int32Array;
}

const GATEWAY_KEY = "e2e-arms-gateway-key";
const ADMIN_TOKEN = "e2e-admin-token-0123456789";
const EMULATOR_KEY = "e2e-emulator-key";
const CHAT = "/v1/chat/completions";

/** A short prompt no workload shares (it lands in one cache as a few blocks at most). */
function warmupBody(model: string): string {
  return JSON.stringify({
    model,
    messages: [{ role: "user", content: "warm up" }],
    max_tokens: 1,
    stream: true,
    stream_options: { include_usage: true },
  });
}

function emulatorOptions(cfg: ArmConfig): EmulatorOptions[] {
  return Array.from({ length: cfg.backends }, () => ({
    port: 0,
    host: "127.0.0.1",
    model: cfg.model,
    apiKey: EMULATOR_KEY,
    speed: cfg.speed,
    engine: cfg.engine,
  }));
}

/** Emulators in this process, for sequential measurements that read them synchronously. */
export function startEmulators(cfg: ArmConfig): Promise<Emulator[]> {
  return startEmulatorsHere(emulatorOptions(cfg));
}

export function backendEntries(urls: readonly string[], cfg: ArmConfig): BackendEntry[] {
  const ids = emulatorIds(urls.length);
  return urls.map((url, i) => ({
    id: ids[i]!,
    url,
    models: [cfg.model],
    apiKey: EMULATOR_KEY,
    weight: 1,
    kvCacheTokens: cfg.engine.kvCacheTokens,
  }));
}

/** The gateway in front of these emulators (BACKENDS from the arm's model and KV capacity). */
export function startGatewayOver(
  emulators: readonly Emulator[],
  cfg: ArmConfig,
  opts: Omit<StartGatewayOptions, "backends">,
): Promise<Gateway> {
  return startGateway({
    ...opts,
    backends: backendEntries(
      emulators.map((e) => e.url),
      cfg,
    ),
  });
}

/**
 * Two emulators at 100× speed behind the gateway in workerd: for measuring
 * the gateway itself, where the isolate, not the model, should fill the time.
 */
export function gatewayCostConfig(model: string, engine: EngineConfig): ArmConfig {
  return { backends: 2, model, speed: 100, engine, requestTimeoutMs: 30_000, runtime: "workerd" };
}

async function kvCounters(fleet: EmulatorFleet): Promise<KvCounters> {
  let queryTokens = 0;
  let hitTokens = 0;
  for (const m of await fleet.metrics()) {
    queryTokens += m.prefixQueryTokens;
    hitTokens += m.prefixHitTokens;
  }
  return { queryTokens, hitTokens };
}

async function warmUp(
  url: string,
  apiKey: string,
  model: string,
  headers?: Readonly<Record<string, string>>,
): Promise<void> {
  const r = await streamRequest({
    url,
    apiKey,
    body: warmupBody(model),
    timeoutMs: 60_000,
    ...(headers !== undefined ? { headers } : {}),
  });
  if (r.outcome !== "ok") throw new Error(`warm-up request failed: ${r.status} ${r.error ?? ""}`);
}

/**
 * Every replayed request carries its own id: the gateway forwards it, and the
 * emulator that served it records its own time to first content under it.
 */
function requestId(index: number): string {
  return `e2e-request-${index}`;
}

/** Arms that are not routing policies. */
export const DIRECT = "direct";
export const PASSTHROUGH = "passthrough";

/**
 * Sends through a client-side least-outstanding pick: straight to the chosen
 * emulator (direct), or through the null gateway naming it (passthrough).
 */
function clientBalanced(
  urls: readonly string[],
  ids: readonly string[],
  picked: Map<E2eItem, string>,
  cfg: ArmConfig,
  via: Gateway | undefined,
): (item: E2eItem, index: number) => Promise<RequestResult> {
  const lo = new LeastOutstanding(urls.length);
  return async (item, index) => {
    const i = lo.acquire();
    picked.set(item, ids[i]!);
    try {
      return await streamRequest(
        via === undefined
          ? {
              url: `${urls[i]!}${CHAT}`,
              apiKey: EMULATOR_KEY,
              body: item.body,
              timeoutMs: cfg.requestTimeoutMs,
              headers: { "x-request-id": requestId(index) },
            }
          : {
              url: `${via.url}${CHAT}`,
              body: item.body,
              timeoutMs: cfg.requestTimeoutMs,
              headers: { "x-e2e-backend": String(i), "x-request-id": requestId(index) },
            },
      );
    } finally {
      lo.release(i);
    }
  };
}

/** The second client's own requests, as it saw them. */
function secondClientResult(records: readonly ReplayRecord<E2eItem>[]): SecondClientResult {
  const ok = records.filter((r) => r.result.outcome === "ok");
  let prompt = 0;
  let cached = 0;
  for (const r of ok) {
    prompt += r.result.promptTokens ?? 0;
    cached += r.result.cachedTokens ?? 0;
  }
  return {
    sent: records.length,
    ok: ok.length,
    ttftMs: summarize(ok.map((r) => r.result.ttftMs ?? Number.NaN)),
    reportedHitRate: prompt > 0 ? cached / prompt : Number.NaN,
  };
}

export async function runArm(arm: string, items: readonly E2eItem[], cfg: ArmConfig): Promise<ArmResult> {
  const log = cfg.log ?? (() => {});
  // On their own thread: the client timing requests must not share an event loop with them (fleet.ts).
  const fleet = await startEmulatorFleet(emulatorOptions(cfg), { thread: true });
  const urls = fleet.urls;
  const entries = backendEntries(urls, cfg);
  const ids = entries.map((b) => b.id);
  let gateway: Gateway | undefined;
  let passthrough: WorkerBundle | undefined;
  try {
    let send: (item: E2eItem, index: number) => Promise<RequestResult>;
    const picked = new Map<E2eItem, string>();
    if (arm === DIRECT) {
      for (const u of urls) await warmUp(`${u}${CHAT}`, EMULATOR_KEY, cfg.model);
      send = clientBalanced(urls, ids, picked, cfg, undefined);
    } else {
      const t0 = performance.now();
      if (arm === PASSTHROUGH) passthrough = await passthroughConfig();
      const configPath = passthrough?.configPath ?? cfg.configPath;
      gateway = await startGateway({
        backends: entries,
        policy: arm === PASSTHROUGH ? "least_outstanding" : arm,
        apiKey: GATEWAY_KEY,
        adminToken: ADMIN_TOKEN,
        runtime: cfg.runtime,
        vars: cfg.gatewayVars,
        ...(configPath !== undefined ? { configPath } : {}),
      });
      log(`  ${arm}: ${cfg.runtime} ready in ${(performance.now() - t0).toFixed(0)} ms`);
      const url = `${gateway.url}${CHAT}`;
      if (arm === PASSTHROUGH) {
        send = clientBalanced(urls, ids, picked, cfg, gateway);
        // One warm-up per backend: each upstream connection is opened once before timing.
        for (let i = 0; i < urls.length; i++)
          await warmUp(url, GATEWAY_KEY, cfg.model, { "x-e2e-backend": String(i) });
      } else {
        // The first request pays the isolate's lazy set-up (tokenizer ranks); keep it out of the figures.
        await warmUp(url, GATEWAY_KEY, cfg.model);
        const key = GATEWAY_KEY;
        send = (item, index) =>
          streamRequest({
            url,
            apiKey: key,
            body: item.body,
            timeoutMs: cfg.requestTimeoutMs,
            headers: { "x-request-id": requestId(index) },
          });
      }
    }
    const around = cfg.around;
    if (around !== undefined) {
      const viaArm = send;
      send = (item, index) => {
        const t = around[index] ?? -1;
        if (t < 0) return viaArm(item, index);
        picked.set(item, ids[t]!);
        return streamRequest({
          url: `${urls[t]!}${CHAT}`,
          apiKey: EMULATOR_KEY,
          body: item.body,
          timeoutMs: cfg.requestTimeoutMs,
          headers: { "x-request-id": requestId(index) },
        });
      };
    }
    const traceDir = process.env.E2E_TRACE_DIR;
    const statsAt = async (when: string): Promise<void> => {
      if (traceDir === undefined || gateway === undefined || arm === PASSTHROUGH) return;
      const res = await fetch(`${gateway.url}/admin/stats`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        signal: AbortSignal.timeout(10_000),
      });
      await writeFile(join(traceDir, `${arm}-stats-${when}.json`), await res.text());
    };
    await statsAt("start");
    const before = await kvCounters(fleet);
    let done = 0;
    const run = await replayOpenLoop({
      items,
      send,
      onDone: (_rec, inflight) => {
        done++;
        if (done % 100 === 0) log(`  ${arm}: ${done}/${items.length} done, ${inflight} in flight`);
      },
    });
    const after = await kvCounters(fleet);
    await statsAt("end");
    if (traceDir !== undefined)
      await writeFile(
        join(traceDir, `${arm}-requests.jsonl`),
        run.records
          .map((r) =>
            JSON.stringify({
              i: r.index,
              atMs: r.item.atMs,
              sentMs: Math.round(r.sentMs),
              backend: r.result.backend ?? picked.get(r.item),
              route: r.result.route,
              expected: r.result.expectedCachedTokens,
              prompt: r.result.promptTokens ?? r.item.request.promptTokens,
              cached: r.result.cachedTokens,
              ttftMs: r.result.ttftMs,
              outcome: r.result.outcome,
            }),
          )
          .join("\n"),
      );
    // What the RouterDO counted (ejections, expired leases, local decisions): a routing arm only.
    const pool: GatewayPoolState | undefined =
      gateway !== undefined && arm !== PASSTHROUGH
        ? await readPoolState(gateway.url, ADMIN_TOKEN, cfg.model)
        : undefined;
    const kv = {
      queryTokens: after.queryTokens - before.queryTokens,
      hitTokens: after.hitTokens - before.hitTokens,
    };
    // The emulators record each request under the id they were sent: through a gateway, the client's id made
    // unique (its x-prefix-gateway-upstream-request-id); straight to an emulator, the client's own.
    const served = await fleet.serverTtftMs(
      run.records.map((r) => r.result.upstreamRequestId ?? requestId(r.index)),
    );
    const serverTtfts = new Map(run.records.map((r, i) => [r.index, served[i]]));
    const isAround = (rec: ReplayRecord<E2eItem>) => (around?.[rec.index] ?? -1) >= 0;
    const result = armResult(
      arm,
      { ...run, records: run.records.filter((rec) => !isAround(rec)) },
      kv,
      (rec: ReplayRecord<E2eItem>) => rec.result.backend ?? picked.get(rec.item),
      (rec: ReplayRecord<E2eItem>) => serverTtfts.get(rec.index),
    );
    const withPool = pool === undefined ? result : { ...result, gatewayPool: pool };
    return around === undefined
      ? withPool
      : { ...withPool, secondClient: secondClientResult(run.records.filter(isAround)) };
  } finally {
    await gateway?.close().catch((err: unknown) => log(`  ${arm}: closing the gateway: ${String(err)}`));
    await passthrough?.dispose();
    await fleet.close();
  }
}
