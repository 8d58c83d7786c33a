// The set-up the decision audits under bench/results/ share: one run of the race's workloads as the
// simulator prepares it (loads, sets and key window as bench/sim-all.sh gives them), and the engine model's
// internals an audit reads through a cast. An audit only: nothing here is used by the router or the simulator.
import { loadSetData } from "../../sim/eval-sets";
import { engineFlags } from "../../sim/flags";
import { DEFAULT_PREFIX_TOKENS, prepareWorkload } from "../../sim/prepare";
import { DEFAULT_TIE_TOLERANCE_MS, PrefixAwarePolicy } from "../../src/routing/policies/prefix-aware";
import { Router } from "../../src/routing/router";
import { engineSignalMaxAgeMs } from "../../src/routing/defaults";
import { readingsOf, routerFactory, viewOf } from "../../sim/policies";
import { oracleHitRate } from "../../sim/oracle";
import {
  type FleetConfig,
  type RouterFactory,
  type SimObserver,
  type SimRouter,
  simulatePolicy,
} from "../../sim/simulator";

/** What an audit reads inside one engine model (sim/model/): its block pool, its scheduler, its batch. */
export interface EngineInside {
  pool: { numFree: number; numBlocks: number; longestPrefix(keys: readonly number[]): number };
  scheduler: { waiting: { promptTokens: number }[]; waitHead: number; admitted: number };
  batch: { size: number };
}

export interface AuditRunSpec {
  /** A workload of the race, or "mooncake" (MOONCAKE_TRACE). */
  readonly spec: string;
  readonly backends: number;
  /** req/s for a synthetic workload, the replay speed for mooncake. */
  readonly load: number;
  /** "none": a seed in neither set. */
  readonly set: string;
  readonly seed: number;
  readonly preset: string;
  /** As bench/sim-all.sh's --requests (multi-turn: 10000); undefined: the workload's default. */
  readonly requests?: number;
}

/** The run most audits of Mooncake's MoE tail default to: 8 backends at ×2, the tuning half, seed 1. */
export const MOONCAKE_MOE_8_TUNING: AuditRunSpec = {
  spec: "mooncake",
  backends: 8,
  load: 2,
  set: "tuning",
  seed: 1,
  preset: "qwen3-30b-a3b-h100-vllm",
};

/** Burst 8B seed 80: the +43% collision run of fresh-seeds, the default of first-prefill's and copy-guard's audits. */
export const BURST_8B_SEED_80: Omit<AuditRunSpec, "requests"> = {
  spec: "burst",
  backends: 8,
  load: 28,
  set: "none",
  seed: 80,
  preset: "llama-3.1-8b-h100-vllm",
};

/** The prepared requests and the fleet of one audited run (the 32k key window and max_tokens as clients send it). */
export async function loadAuditRun(a: AuditRunSpec) {
  const isTrace = a.spec === "mooncake";
  const data = await loadSetData(a.spec, {
    rate: isTrace ? 1 : a.load,
    seed: a.seed,
    speed: isTrace ? a.load : 1,
    ...(a.set === "none" ? {} : { set: a.set as "tuning" | "scoring" }),
    ...(a.requests !== undefined ? { requests: a.requests } : {}),
  });
  const w = prepareWorkload(data.workload, { prefixTokens: DEFAULT_PREFIX_TOKENS, maxTokens: "clients", seed: a.seed });
  const fleet: FleetConfig = { backends: a.backends, seed: a.seed, ...engineFlags(a.preset, undefined) };
  return { w, fleet };
}

/** REQUESTS=N from the environment, as the audits take it. */
function requestsFromEnv(): number | undefined {
  return process.env.REQUESTS !== undefined ? Number(process.env.REQUESTS) : undefined;
}

/**
 * The run named on the command line as WORKLOAD BACKENDS LOAD SET SEED PRESET (each defaulting to
 * `defaults`), REQUESTS=N from the environment, loaded; `extra` holds the arguments past the sixth.
 */
export async function loadAuditRunFromArgv(defaults: Omit<AuditRunSpec, "requests">) {
  const [spec, backends, load, set, seed, preset, ...extra] = process.argv.slice(2);
  const a: AuditRunSpec = {
    spec: spec ?? defaults.spec,
    backends: backends !== undefined ? Number(backends) : defaults.backends,
    load: load !== undefined ? Number(load) : defaults.load,
    set: set ?? defaults.set,
    seed: seed !== undefined ? Number(seed) : defaults.seed,
    preset: preset ?? defaults.preset,
    requests: requestsFromEnv(),
  };
  return { ...a, ...(await loadAuditRun(a)), extra };
}

/** Wraps a router factory so that each request's TTFT (from its completion outcome) lands in `ttft[i]`. */
export function withTtft(make: RouterFactory, ttft: Float64Array): RouterFactory {
  return (specs, readings) => {
    const r = make(specs, readings);
    const index = new Map<unknown, number>();
    let k = 0;
    return {
      route(req, ctx) {
        const out = r.route(req, ctx);
        index.set(out.ticket, k++); // every request goes through the router in arrival order (no second client)
        return out;
      },
      ...(r.firstToken ? { firstToken: r.firstToken.bind(r) } : {}),
      complete(ticket, outcome, ctx) {
        ttft[index.get(ticket)!] = outcome.ttftMs ?? Number.NaN;
        index.delete(ticket);
        r.complete(ticket, outcome, ctx);
      },
    };
  };
}

/**
 * The p-quantile of `xs` as the element at rank floor(p·n) of the sorted list (0 for none; one rank above
 * nearest-rank where p·n is whole): the audits' one summary of a list of sizes, kept as the audits printed it.
 */
export function quantileOf(xs: readonly number[], p: number): number {
  const s = [...xs].sort((x, y) => x - y);
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

/** One run of prefix_aware (a fresh policy, the workload's block size) as bench:sim runs it. */
export function simulatePrefixAware(w: Parameters<typeof simulatePolicy>[0], fleet: FleetConfig) {
  return simulatePolicy(w, fleet, "prefix_aware", routerFactory("prefix_aware", w.blockTokens), viewOf("prefix_aware"));
}

/**
 * prefix_aware's router as bench:sim builds it or, with TIE=ms in the environment, with that tie tolerance
 * instead (0.9 / 1.1 / 1.2 against 1): a perturbation of no meaning that shows how far a p99 moves by chance,
 * the audits' noise gauge (tail-gaps/README.md). `scrapeMs` > 0: engine readings as that scrape gives them.
 */
export function tieGaugedRouter(blockTokens: number, scrapeMs: number): RouterFactory {
  return (specs, readings): SimRouter =>
    process.env.TIE === undefined
      ? routerFactory("prefix_aware", blockTokens)(specs, readings)
      : new Router(specs, {
          policy: new PrefixAwarePolicy({
            tieToleranceMs: Number(process.env.TIE),
            ...(scrapeMs > 0 ? { engineSignalMaxAgeMs: engineSignalMaxAgeMs(scrapeMs) } : {}),
          }),
          blockTokens,
          ...readingsOf("prefix_aware", readings),
        });
}

/**
 * One run of prefix_aware at the tie tolerance TIE names (ms; unset: the policy's default), scrape off: the noise
 * gauges' run (admission-view/gauge.ts's, written once here for the later gauges).
 */
export function simulateAtTie(w: Parameters<typeof simulatePolicy>[0], fleet: FleetConfig, observer?: SimObserver) {
  const tie = process.env.TIE === undefined ? DEFAULT_TIE_TOLERANCE_MS : Number(process.env.TIE);
  if (!(tie >= 0)) throw new RangeError(`TIE: must be >= 0 ms, got ${process.env.TIE}`);
  return {
    tie,
    r: simulatePolicy(
      w,
      fleet,
      "prefix_aware",
      tieGaugedRouter(w.blockTokens, 0),
      viewOf("prefix_aware"),
      undefined,
      observer,
    ),
  };
}

/**
 * The pooled oracle's hit per request, in tokens (sim/oracle.ts's loop, kept per request; its sum is checked
 * against oracleHitRate so the two cannot drift). `probe(i, lru)` sees the pooled LRU (oldest key first) just
 * before request i touches it: an audit's view of where a block stood in the pooled cache. Written for
 * moe16-hit's audit, shared since moe16-evict's.
 */
export function pooledOracleByRequest(
  w: Parameters<typeof simulatePolicy>[0],
  capacityBlocks: number,
  probe?: (i: number, lru: ReadonlyMap<number, true>) => void,
): Float64Array {
  const bt = w.blockTokens;
  const n = w.requests.length;
  const oracle = new Float64Array(n);
  const lru = new Map<number, true>();
  for (let i = 0; i < n; i++) {
    const blocks = w.promptBlocks[i]!;
    const usable = Math.min(blocks.length, Math.floor((w.requests[i]!.promptTokens - 1) / bt));
    probe?.(i, lru);
    let hit = 0;
    while (hit < usable && lru.has(blocks[hit]!)) hit++;
    oracle[i] = hit * bt;
    for (let j = blocks.length - 1; j >= 0; j--) {
      lru.delete(blocks[j]!);
      lru.set(blocks[j]!, true);
    }
    while (lru.size > capacityBlocks) lru.delete(lru.keys().next().value as number);
  }
  const ref = oracleHitRate(
    w.requests.map((r, i) => ({ blocks: w.promptBlocks[i]!, promptTokens: r.promptTokens })),
    capacityBlocks,
    bt,
  );
  const sum = oracle.reduce((x, y) => x + y, 0);
  if (sum !== ref.cachedTokens) throw new Error(`per-request oracle ${sum} ≠ sim/oracle.ts ${ref.cachedTokens}`);
  return oracle;
}
