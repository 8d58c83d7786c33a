/**
 * The discrete-event simulator: one policy, one fleet, one workload.
 *
 * Virtual time in ms. Two event sources: request arrivals (sorted) and the
 * engines (each EngineModel says when its next step boundary is). The loop
 * always takes the earliest; on a tie the arrival goes first, so requests
 * that arrive at one instant are all queued when an engine schedules its
 * step at that instant (an idle engine's step starts at the arrival). Each
 * arrival is routed with the routing core's Router (ctx.now = virtual time,
 * ctx.random = a seeded stream), submitted to the chosen engine, and
 * completed in the Router when the engine's `done` event fires, with the
 * cached tokens and TTFT the engine reported (what the gateway would read
 * from usage and the stream).
 *
 * Two options change what the router faces. A second client
 * (second-client.ts) sends a share of the requests straight to an engine,
 * around the router: those are never routed nor reported to it, and the
 * figures of a run are those of the requests the router placed, the second
 * client's apart. A scrape (scrape-ticker.ts) reads the engines every
 * `scrapeMs`, as the RouterDO does, for our policies; the peers read the
 * engines live (policies.ts readingsOf says who gets which).
 */

import { engineSignalMaxAgeMs } from "../src/routing/defaults";
import type {
  BackendSpec,
  EngineSignals,
  RouteContext,
  RouteDecision,
  RouteOutcome,
  RouteReason,
  RouteRequest,
} from "../src/routing/types";
import { isBaselineName } from "./baselines/index";
import { contextOverflow, kvAllocationOf } from "./model/engine-config";
import { DEFAULT_ENGINE_CONFIG, EngineModel } from "./model/engine-model";
import { enginePreset } from "./model/presets";
import type { EngineConfig } from "./model/types";
import { completionAt, isInline, type NoticeDelay, NoticeDelays, NoticeQueue } from "./notice-delay";
import type { PreparedWorkload } from "./prepare";
import { type RequestView, routeRequest } from "./request-view";
import { ScrapeTicker } from "./scrape-ticker";
import { type SecondClient, secondClientTargets } from "./second-client";
import { mean, percentile, sortedCopy } from "./stats";
import { Rng } from "./workloads/prng";

/** What the simulator needs of a router: the routing core's Router satisfies it. */
export interface SimRouter {
  route(req: RouteRequest, ctx: RouteContext): { decision: RouteDecision; ticket: unknown };
  complete(ticket: unknown, outcome: RouteOutcome, ctx: RouteContext): void;
  /** The first token of a routed request streamed back (Dynamo's router moves it from prefill to decode). */
  firstToken?(ticket: unknown, ctx: RouteContext): void;
  /** The gateway's scrape read the engines at ctx.now (FleetConfig.scrapeMs): the lagged clairvoyant reference resets its beliefs. */
  scraped?(ctx: RouteContext): void;
  /** What the router reports about itself (the routing core's Router.stats): read once, after the run. */
  stats?(now?: number): { readonly backends: readonly { readonly prefillTokensPerSec?: number }[] };
}

/** The engines' state, as a router may read it. */
export interface FleetReadings {
  /** Each engine right now (what the peers' scrapers read, without their lag). */
  readonly live: (i: number) => EngineSignals;
  /** As the gateway's scrape last took it, every FleetConfig.scrapeMs; absent when the scrape is off. */
  readonly scraped?: (i: number) => EngineSignals | undefined;
  /** Readings older than this are stale (defaults.ts engineSignalMaxAgeMs), with `scraped`. */
  readonly scrapedMaxAgeMs?: number;
}

/**
 * Watches one run request by request (diagnostics: sim/index-audit.ts). Called
 * at the decision, before the engine sees the request, and when it is done.
 */
export interface SimObserver {
  /** Request i was routed to backend `backend`; `engines` are as they stand at the decision. */
  routed?(i: number, backend: number, decision: RouteDecision, engines: readonly EngineModel[]): void;
  /** Request i completed on `backend`, with the cached tokens its engine reported and its TTFT. */
  done?(i: number, backend: number, cachedTokens: number, ttftMs: number): void;
  /**
   * `sent` of the `total` requests have arrived (been routed and submitted): called every
   * REPLAY_PROGRESS_EVERY arrivals and after the last, so a long replay can say how far it is.
   */
  replayed?(sent: number, total: number): void;
}

/** Arrivals between two SimObserver.replayed calls: often enough for a progress line, cheap per request. */
export const REPLAY_PROGRESS_EVERY = 4096;

/**
 * Builds a fresh router for one run, given the fleet and the engines' readings. `engines`, the
 * simulated engines themselves, are for the clairvoyant reference (sim/clairvoyant.ts) alone: no
 * product policy or peer is given them (policies.ts routerFactory ignores them).
 */
export type RouterFactory = (
  backends: readonly BackendSpec[],
  readings: FleetReadings,
  engines?: readonly EngineModel[],
) => SimRouter;

export interface FleetConfig {
  readonly backends: number;
  /** KV capacity of each engine, tokens. */
  readonly kvCacheTokens: number;
  /** Relative weights, one per backend (default all 1). */
  readonly weights?: readonly number[];
  /**
   * Backend ids, one per backend (default b0, b1, …). The ring is keyed by
   * them, so a prediction for a real fleet (the e2e replay's emu-1…) must use
   * that fleet's ids to place new prefixes where the gateway does.
   */
  readonly ids?: readonly string[];
  /**
   * Engine parameters other than capacity, block size and the model's context (default
   * DEFAULT_ENGINE_CONFIG's). The context, maxModelLen, is `preset`'s (engineConfig).
   */
  readonly engine?: Partial<Omit<EngineConfig, "kvCacheTokens" | "blockTokens" | "maxModelLen">>;
  /** The name of the preset `engine` comes from: reports, and the model's maxModelLen (absent: the default's). */
  readonly preset?: string;
  readonly seed: number;
  /** The gateway's scrape of the engines' /metrics, every this many ms (ENGINE_SCRAPE_MS); 0 or absent: off. */
  readonly scrapeMs?: number;
  /** Requests sent straight to the engines, around the router; absent: none. */
  readonly secondClient?: SecondClient;
  /**
   * When our policies' router hears first tokens and completions (notice-delay.ts); absent: at the
   * engine's instant. The peers' routers always hear them at once (in production they sit beside
   * their engines).
   */
  readonly noticeDelay?: NoticeDelay;
}

/** What the second client's own requests met (they are not in the policy's figures). */
export interface SecondClientResult {
  readonly requests: number;
  readonly hitRate: number;
  readonly ttftP50Ms: number;
  readonly ttftP99Ms: number;
}

/** One policy's run. Request figures are those of the requests the router placed. */
export interface PolicyResult {
  readonly policy: string;
  readonly requests: number;
  readonly completed: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly hitRate: number;
  readonly ttftP50Ms: number;
  readonly ttftP90Ms: number;
  readonly ttftP99Ms: number;
  readonly e2eP50Ms: number;
  readonly e2eP99Ms: number;
  readonly outputTokensPerSec: number;
  /** Virtual ms from first arrival to last completion. */
  readonly makespanMs: number;
  /** Per backend, time-averaged requests in flight (routed, not done). */
  readonly inflightAvg: readonly number[];
  /** Busiest backend's time-averaged in-flight ÷ (its weight share × fleet total). */
  readonly maxLoadRatio: number;
  /** Per backend, share of the routed requests. */
  readonly requestShare: readonly number[];
  /** Prefill compute of every engine, the second client's requests included. */
  readonly prefillGpuSeconds: number;
  /** Preemptions over every engine; only under kvAllocation "incremental", the default (reserve never preempts). */
  readonly preemptions?: number;
  readonly reasons: Readonly<Record<RouteReason, number>>;
  /** With a second client: what its requests met. */
  readonly secondClient?: SecondClientResult;
  /**
   * The prefill rate the router had learned at the end of the run, tokens/s of model time, mean over
   * the backends (absent for policies that learn none): the e2e replay's RouterDO reports the same figure.
   */
  readonly learnedPrefillTokensPerSec?: number;
  /** Wall ms this run took. */
  readonly wallMs: number;
}

export function fleetSpecs(fleet: FleetConfig): BackendSpec[] {
  if (!Number.isInteger(fleet.backends) || fleet.backends < 1)
    throw new RangeError(`backends must be a positive integer, got ${fleet.backends}`);
  if (!(fleet.kvCacheTokens > 0))
    throw new RangeError(`kvCacheTokens must be > 0, got ${fleet.kvCacheTokens}`);
  if (fleet.weights !== undefined && fleet.weights.length !== fleet.backends)
    throw new RangeError(`weights: expected ${fleet.backends} values, got ${fleet.weights.length}`);
  const ids = fleet.ids;
  if (ids !== undefined && (ids.length !== fleet.backends || new Set(ids).size !== ids.length))
    throw new RangeError(`ids: expected ${fleet.backends} distinct ids, got ${JSON.stringify(ids)}`);
  return Array.from({ length: fleet.backends }, (_, i) => ({
    id: ids?.[i] ?? `b${i}`,
    weight: fleet.weights?.[i] ?? 1,
    kvCacheTokens: fleet.kvCacheTokens,
  }));
}

export function engineConfig(fleet: FleetConfig, blockTokens: number): EngineConfig {
  // The model's context is the named preset's (the default's without one): a fact of the model, not a knob.
  const { maxModelLen } = fleet.preset === undefined ? DEFAULT_ENGINE_CONFIG : enginePreset(fleet.preset);
  return {
    ...DEFAULT_ENGINE_CONFIG,
    ...fleet.engine,
    kvCacheTokens: fleet.kvCacheTokens,
    blockTokens,
    maxModelLen,
  };
}

/**
 * One policy over the whole workload. `view` says what the router is given
 * of each request (request-view.ts); the engines always get the whole prompt.
 */
export function simulatePolicy(
  w: PreparedWorkload,
  fleet: FleetConfig,
  policy: string,
  makeRouter: RouterFactory,
  view: RequestView,
  clock: () => number = () => performance.now(),
  observer?: SimObserver,
): PolicyResult {
  const wall0 = clock();
  const specs = fleetSpecs(fleet);
  const n = specs.length;
  const cfg = engineConfig(fleet, w.blockTokens);
  const engines = specs.map(() => new EngineModel(cfg));
  // A workload the engine could not serve is an error here, not a silent run: vLLM refuses each such request.
  for (let i = 0; i < w.requests.length; i++) {
    const r = w.requests[i]!;
    const over = contextOverflow(cfg, String(i), r.promptTokens, Math.max(1, r.outputTokens));
    if (over !== undefined) throw new RangeError(`${w.name}: ${over}; use a preset with a longer context`);
  }
  const ids = specs.map((b) => b.id);
  const indexOf = new Map(ids.map((id, i) => [id, i]));
  const reqs = w.requests;
  const total = reqs.length;
  const t0 = total > 0 ? reqs[0]!.arrivalMs : 0;
  /** The router's requests in flight per backend (routed, not done): the second client's are not. */
  const inflight = new Int32Array(n);
  let now = 0;
  const live = (i: number): EngineSignals => {
    const e = engines[i]!;
    const m = e.metrics(now);
    return {
      running: m.running,
      waiting: m.waiting,
      kvUsage: m.kvUsage,
      sampledAt: now,
      ownInflight: inflight[i]!,
      cachedPrefixBlocks: (blocks) => e.cachedPrefixBlocks(blocks),
    };
  };
  const scrapeMs = fleet.scrapeMs ?? 0;
  const maxAgeMs = scrapeMs > 0 ? engineSignalMaxAgeMs(scrapeMs) : 0;
  const ticker = scrapeMs > 0 ? new ScrapeTicker(scrapeMs, t0, ids, maxAgeMs) : undefined;
  const router = makeRouter(
    specs,
    ticker === undefined ? { live } : { live, scraped: ticker.book.read, scrapedMaxAgeMs: maxAgeMs },
    engines,
  );
  const random = new Rng(fleet.seed).fork(`router/${policy}`).source();
  // Our router hears notices late when the fleet says so; a peer's never (see FleetConfig.noticeDelay).
  const late = isBaselineName(policy) || isInline(fleet.noticeDelay) ? undefined : fleet.noticeDelay;
  const delays = late === undefined ? undefined : new NoticeDelays(late, fleet.seed, policy);
  const notices = new NoticeQueue<{ id: number; outcome?: RouteOutcome }>();
  /** Per request: when its first token's notice reaches the router (a completion never comes before). */
  const heardFirst = new Float64Array(total).fill(Number.NEGATIVE_INFINITY);
  /** Per request: the engine the second client sends it to, −1 when the router places it. */
  const around = secondClientTargets(total, n, fleet.secondClient, fleet.seed);

  const tickets: unknown[] = new Array(total);
  const ttft = new Float64Array(total).fill(Number.NaN);
  const e2e = new Float64Array(total).fill(Number.NaN);
  const cached = new Float64Array(total);
  const reasons: Record<RouteReason, number> = { affinity: 0, ring: 0, spill: 0, fallback: 0 };
  const area = new Float64Array(n);
  const lastChange = new Float64Array(n);
  const routedTo = new Int32Array(n);
  const nextAt = new Float64Array(n).fill(Number.POSITIVE_INFINITY);
  lastChange.fill(t0);
  let completed = 0;
  let outputTokens = 0;
  let lastDone = t0;

  const setInflight = (i: number, delta: number, t: number): void => {
    area[i]! += inflight[i]! * (t - lastChange[i]!);
    lastChange[i] = t;
    inflight[i]! += delta;
  };

  let next = 0;
  let stall = 0;
  for (;;) {
    let ei = -1;
    let et = Number.POSITIVE_INFINITY;
    for (let i = 0; i < n; i++)
      if (nextAt[i]! < et) {
        et = nextAt[i]!;
        ei = i;
      }
    const at = next < total ? reqs[next]!.arrivalMs : Number.POSITIVE_INFINITY;
    if (ei < 0 && next >= total && notices.size === 0) break;
    // A late notice due before (or with) the next event reaches the router first.
    if (notices.nextAt <= Math.min(et, at, ticker?.nextAt ?? Number.POSITIVE_INFINITY)) {
      const n = notices.pop()!;
      now = n.at;
      const { id, outcome } = n.item;
      if (outcome === undefined) router.firstToken?.(tickets[id], { now, random });
      else {
        router.complete(tickets[id], outcome, { now, random });
        tickets[id] = undefined;
      }
      continue;
    }
    // A scrape due before (or with) the next event reads the engines first; none once the run is over.
    if (ticker !== undefined && ticker.nextAt <= Math.min(et, at)) {
      now = ticker.nextAt;
      ticker.tick(engines, ids, inflight);
      router.scraped?.({ now, random });
      continue;
    }
    if (ei >= 0 && et < at) {
      now = et;
      const engine = engines[ei]!;
      const events = engine.advance(et);
      for (const ev of events) {
        const id = Number(ev.id);
        const routed = around[id] === -1;
        if (ev.kind === "first_token") {
          ttft[id] = ev.time - reqs[id]!.arrivalMs;
          if (!routed) continue;
          if (late === undefined) router.firstToken?.(tickets[id], { now: ev.time, random });
          else if (late.firstTokens) {
            heardFirst[id] = ev.time + delays!.draw();
            notices.push(heardFirst[id]!, { id });
          }
          continue;
        }
        if (!Number.isNaN(e2e[id]!)) throw new Error(`request ${id} completed twice`);
        e2e[id] = ev.time - reqs[id]!.arrivalMs;
        if (Number.isNaN(ttft[id]!)) ttft[id] = e2e[id]!;
        cached[id] = ev.cachedTokens;
        completed++;
        lastDone = Math.max(lastDone, ev.time);
        if (!routed) continue;
        outputTokens += ev.outputTokens;
        setInflight(ei, -1, ev.time);
        observer?.done?.(id, ei, ev.cachedTokens, ttft[id]!);
        const outcome: RouteOutcome = {
          ok: true,
          promptTokens: reqs[id]!.promptTokens,
          cachedTokens: ev.cachedTokens,
          ttftMs: ttft[id]!,
          // usage.completion_tokens, as a gateway reads it at the response's end.
          outputTokens: ev.outputTokens,
        };
        if (late === undefined) {
          router.complete(tickets[id], outcome, { now: ev.time, random });
          tickets[id] = undefined;
        } else {
          const arrival = (i: number) => reqs[i]!.arrivalMs;
          const heard = completionAt(
            ev.time,
            delays!.draw(),
            late.carryMs,
            arrival,
            next,
            total,
            heardFirst[id]!,
          );
          notices.push(heard, { id, outcome });
        }
      }
      const after = engine.nextEventTime();
      // An engine that neither emits events nor moves its clock forward would spin forever.
      stall = events.length === 0 && after <= et ? stall + 1 : 0;
      if (stall > 1000) throw new Error(`engine ${ei} is stuck at t=${et}`);
      nextAt[ei] = after;
      continue;
    }
    now = at;
    const r = reqs[next]!;
    let bi = around[next]!;
    if (bi < 0) {
      const { decision, ticket } = router.route(routeRequest(w, next, view), { now, random });
      bi = indexOf.get(decision.backendId) ?? -1;
      if (bi < 0) throw new Error(`${policy} routed to unknown backend ${decision.backendId}`);
      tickets[next] = ticket;
      reasons[decision.reason]++;
      routedTo[bi]!++;
      setInflight(bi, +1, now);
      observer?.routed?.(next, bi, decision, engines);
    }
    engines[bi]!.submit(
      {
        id: String(next),
        blocks: w.promptBlocks[next]!,
        promptTokens: r.promptTokens,
        // Engines generate at least one token (the first token is what TTFT measures).
        outputTokens: Math.max(1, r.outputTokens),
      },
      now,
    );
    nextAt[bi] = engines[bi]!.nextEventTime();
    next++;
    if (next % REPLAY_PROGRESS_EVERY === 0 || next === total) observer?.replayed?.(next, total);
  }

  if (completed !== total) throw new Error(`${total - completed} of ${total} requests never completed`);
  for (let i = 0; i < n; i++) setInflight(i, 0, lastDone);
  const span = Math.max(lastDone - t0, 1e-9);
  const inflightAvg = Array.from(area, (a) => a / span);
  const totalAvg = inflightAvg.reduce((s, v) => s + v, 0);
  const wsum = specs.reduce((s, b) => s + b.weight, 0);
  let maxLoadRatio = 0;
  for (let i = 0; i < n; i++) {
    const fair = (specs[i]!.weight / wsum) * totalAvg;
    if (fair > 0) maxLoadRatio = Math.max(maxLoadRatio, inflightAvg[i]! / fair);
  }
  const mine = requestFigures(reqs, cached, ttft, e2e, (i) => around[i] === -1);
  const rates = (router.stats?.(lastDone).backends ?? []).flatMap((b) =>
    b.prefillTokensPerSec !== undefined ? [b.prefillTokensPerSec] : [],
  );
  const theirs =
    fleet.secondClient === undefined
      ? undefined
      : requestFigures(reqs, cached, ttft, e2e, (i) => around[i] !== -1);
  return {
    policy,
    requests: mine.requests,
    completed: mine.requests,
    promptTokens: mine.promptTokens,
    cachedTokens: mine.cachedTokens,
    hitRate: mine.hitRate,
    ttftP50Ms: percentile(mine.ttft, 50),
    ttftP90Ms: percentile(mine.ttft, 90),
    ttftP99Ms: percentile(mine.ttft, 99),
    e2eP50Ms: percentile(mine.e2e, 50),
    e2eP99Ms: percentile(mine.e2e, 99),
    outputTokensPerSec: outputTokens / (span / 1000),
    makespanMs: span,
    inflightAvg,
    maxLoadRatio,
    requestShare: Array.from(routedTo, (c) => (mine.requests > 0 ? c / mine.requests : 0)),
    prefillGpuSeconds: engines.reduce((s, e) => s + e.metrics(lastDone).prefillSeconds, 0),
    ...(kvAllocationOf(cfg) === "incremental"
      ? { preemptions: engines.reduce((s, e) => s + e.metrics(lastDone).preemptions, 0) }
      : {}),
    reasons,
    ...(theirs === undefined
      ? {}
      : {
          secondClient: {
            requests: theirs.requests,
            hitRate: theirs.hitRate,
            ttftP50Ms: percentile(theirs.ttft, 50),
            ttftP99Ms: percentile(theirs.ttft, 99),
          },
        }),
    ...(rates.length > 0 ? { learnedPrefillTokensPerSec: mean(rates) } : {}),
    wallMs: clock() - wall0,
  };
}

/** Hit rate and sorted latencies of the requests `which` selects. */
function requestFigures(
  reqs: PreparedWorkload["requests"],
  cached: Float64Array,
  ttft: Float64Array,
  e2e: Float64Array,
  which: (i: number) => boolean,
): {
  requests: number;
  promptTokens: number;
  cachedTokens: number;
  hitRate: number;
  ttft: Float64Array;
  e2e: Float64Array;
} {
  let requests = 0;
  let promptTokens = 0;
  let cachedTokens = 0;
  const t: number[] = [];
  const e: number[] = [];
  for (let i = 0; i < reqs.length; i++) {
    if (!which(i)) continue;
    requests++;
    promptTokens += reqs[i]!.promptTokens;
    cachedTokens += cached[i]!;
    t.push(ttft[i]!);
    e.push(e2e[i]!);
  }
  return {
    requests,
    promptTokens,
    cachedTokens,
    hitRate: promptTokens > 0 ? cachedTokens / promptTokens : 0,
    ttft: sortedCopy(t),
    e2e: sortedCopy(e),
  };
}

/** Mean of the per-backend averages, for tables (max/mean in-flight). */
export function loadMaxOverMean(r: PolicyResult): number {
  const m = mean(r.inflightAvg);
  return m > 0 ? Math.max(...r.inflightAvg) / m : 0;
}
