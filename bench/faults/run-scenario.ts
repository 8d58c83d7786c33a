/**
 * Runs one fault-table scenario on a fresh rig: a warm-up request, ordinary
 * streams alongside for a baseline, the fault (the scenario's run()), a
 * short tail, then the clients stop and the RouterDO's leases are watched
 * until they reach 0. Reports what ordinary clients saw before, during and
 * after the fault, and what the gateway did (usage counters across the
 * fault, leases at the end, workerd CPU and memory) beside the scenario's
 * own figures. A scenario that throws is reported as such; the rig is
 * always closed.
 */
import type { UsageTotals } from "../../src/worker/router/router-rpc";
import { summarize } from "../latency-summary";
import { type RequestRecord, RunClock, sendOne, startTraffic, type Traffic } from "./clients";
import { ENDINGS, type Ending } from "./ending";
import { round, waitFor } from "./measure";
import { DEFAULT_SHAPE, ordinaryBody } from "./prompts";
import { GATEWAY_KEY, startRig } from "./rig";
import { startSampler } from "./samples";
import { type Figure, type Scenario, type ScenarioContext, statsAt } from "./scenario";

/** Gauges every this often: fine enough to time an ejection. */
const SAMPLE_MS = 250;
const REQUEST_TIMEOUT_MS = 120_000;
/** After the clients stop, leases get this long to reach 0. */
const SETTLE_MS = 15_000;
const MIB = 1024 * 1024;

export interface PhaseFigures {
  readonly requests: number;
  /** Requests that did not end with [DONE], by ending. */
  readonly failed: Readonly<Partial<Record<Ending, number>>>;
  readonly ttftP50Ms: number | null;
  readonly ttftP99Ms: number | null;
  readonly ttftMaxMs: number | null;
}

export interface GatewayFigures {
  /** RouterDO usage counters across the fault (from its last sample before the fault to the end). */
  readonly usage: Readonly<Partial<UsageTotals>>;
  readonly leasesAtEnd: number | null;
  /** ms after the clients stopped until leases were 0 (null: not within the settle). */
  readonly leasesZeroAfterMs: number | null;
  readonly workerdCpuMsDuring: number;
  readonly rssBeforeMiB: number | null;
  readonly rssMaxDuringMiB: number | null;
}

export interface ScenarioResult {
  readonly id: string;
  readonly fault: string;
  readonly asFiled: string;
  readonly now: string;
  readonly figures: Readonly<Record<string, Figure>>;
  readonly ordinary: {
    readonly before: PhaseFigures;
    readonly during: PhaseFigures;
    readonly after: PhaseFigures;
  };
  readonly gateway: GatewayFigures;
  /** Seconds from the rig's start. */
  readonly faultAtS: number;
  readonly clearAtS: number;
  readonly error?: string;
}

export interface RunScenarioOptions {
  readonly configPath: string;
  readonly baselineMs: number;
  readonly tailMs: number;
  readonly log: (line: string) => void;
  /** ROUTER_CELLS of the gateway under fault (default 1: one RouterDO). */
  readonly cells?: number;
}

export function phaseFigures(records: readonly RequestRecord[]): PhaseFigures {
  const failed: Partial<Record<Ending, number>> = {};
  for (const r of records) if (r.ending !== "done") failed[r.ending] = (failed[r.ending] ?? 0) + 1;
  const ttft = summarize(records.filter((r) => r.ending === "done").map((r) => r.ttftMs ?? Number.NaN));
  return {
    requests: records.length,
    failed,
    ttftP50Ms: round(ttft.p50, 1),
    ttftP99Ms: round(ttft.p99, 1),
    ttftMaxMs: round(ttft.max, 1),
  };
}

function usageDelta(from: UsageTotals | undefined, to: UsageTotals | undefined): Partial<UsageTotals> {
  if (to === undefined) return {};
  const out: Partial<Record<keyof UsageTotals, number>> = {};
  for (const k of Object.keys(to) as (keyof UsageTotals)[]) {
    const a = from?.[k] ?? 0;
    // A restarted RouterDO counts from 0 again: then its own totals are the delta.
    out[k] = to[k] >= a ? to[k] - a : to[k];
  }
  return out;
}

export async function runScenario(s: Scenario, opts: RunScenarioOptions): Promise<ScenarioResult> {
  const log = (line: string) => opts.log(`  ${s.id}: ${line}`);
  const cells = opts.cells ?? 1;
  const rig = await startRig({
    emulators: s.emulators ?? 4,
    configPath: opts.configPath,
    cells,
    ...(s.entries !== undefined ? { entries: s.entries } : {}),
  });
  if (cells > rig.ids.length) {
    await rig.close();
    throw new Error(`${s.id}: --cells ${cells} is more than its ${rig.ids.length} backends`);
  }
  const clock = new RunClock();
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  const traffics: Traffic[] = [];
  const stopped: RequestRecord[] = [];
  let generation = 0;
  let faultAt: number | undefined;
  let clearAt: number | undefined;
  let cpuAtFault = 0;
  let cpuAtClear = 0;
  const sampler = startSampler(rig, clock, SAMPLE_MS);
  const ctx: ScenarioContext = {
    rig,
    clock,
    log,
    samples: sampler.samples,
    startTraffic(n) {
      const g = generation++;
      traffics.push(
        startTraffic({
          url: () => rig.url,
          apiKey: GATEWAY_KEY,
          clients: n,
          body: (c, k) => ordinaryBody(DEFAULT_SHAPE, `${s.id}/${g}`, c, k),
          idPrefix: `${s.id}-${g}`,
          clock,
          timeoutMs: REQUEST_TIMEOUT_MS,
        }),
      );
    },
    async stopTraffic() {
      const all = traffics.splice(0);
      await Promise.all(all.map((t) => t.stop()));
      for (const t of all) stopped.push(...t.records);
    },
    inflight: () => traffics.reduce((n, t) => n + t.inflight(), 0),
    ordinary: () => [...stopped, ...traffics.flatMap((t) => t.records)],
    mark(what) {
      if (what === "fault") {
        faultAt = clock.now();
        cpuAtFault = rig.cpuMs();
      } else {
        clearAt = clock.now();
        cpuAtClear = rig.cpuMs();
      }
    },
    send: (o) =>
      sendOne(
        {
          url: rig.url,
          apiKey: GATEWAY_KEY,
          body: o.body ?? ordinaryBody(DEFAULT_SHAPE, `${s.id}/one/${o.id}`, 0, 0),
          id: o.id,
          timeoutMs: o.timeoutMs ?? REQUEST_TIMEOUT_MS,
          ...(o.signal !== undefined ? { signal: o.signal } : {}),
        },
        clock,
      ),
    sleep,
  };
  let outcome: { now: string; figures: Readonly<Record<string, Figure>> } = { now: "", figures: {} };
  let error: string | undefined;
  let leasesAtEnd: number | undefined;
  let leasesZeroAfterMs: number | undefined;
  try {
    const warm = await ctx.send({ id: `${s.id}-warmup` });
    if (warm.ending !== "done") log(`warm-up ended ${warm.ending} (${warm.status})`);
    const background = s.background ?? 20;
    if (background > 0) {
      ctx.startTraffic(background);
      await sleep(opts.baselineMs);
    }
    if (cells > 1) log(`cells: ${(await rig.cellMembers())?.join(" | ")}`);
    log("fault");
    const runStart = clock.now();
    const cpuAtRunStart = rig.cpuMs();
    try {
      outcome = await s.run(ctx);
    } catch (err) {
      error = err instanceof Error ? (err.stack ?? err.message) : String(err);
      log(`failed: ${error}`);
    }
    if (faultAt === undefined) {
      faultAt = runStart;
      cpuAtFault = cpuAtRunStart;
    }
    if (clearAt === undefined) ctx.mark("clear");
    await sleep(opts.tailMs);
    await ctx.stopTraffic();
    leasesZeroAfterMs = await waitFor(async () => (await rig.poolStats())?.leases === 0, SETTLE_MS, 250);
    leasesAtEnd = (await rig.poolStats())?.leases;
  } finally {
    await sampler.stop();
    await ctx.stopTraffic();
    await rig.close();
  }
  const fa = faultAt!;
  const ca = clearAt!;
  const records = ctx.ordinary();
  const samples = sampler.samples;
  const during = samples.filter((x) => x.tMs >= fa && x.tMs <= ca && x.rssBytes !== undefined);
  const before = statsAt(samples, fa);
  const last = [...samples].reverse().find((x) => x.usage !== undefined);
  return {
    id: s.id,
    fault: s.fault,
    asFiled: s.asFiled,
    now: outcome.now,
    figures: outcome.figures,
    ordinary: {
      before: phaseFigures(records.filter((r) => r.endMs < fa)),
      during: phaseFigures(records.filter((r) => r.endMs >= fa && r.startMs < ca)),
      after: phaseFigures(records.filter((r) => r.startMs >= ca)),
    },
    gateway: {
      usage: usageDelta(before?.usage, last?.usage),
      leasesAtEnd: leasesAtEnd ?? null,
      leasesZeroAfterMs: round(leasesZeroAfterMs),
      workerdCpuMsDuring: cpuAtClear - cpuAtFault,
      rssBeforeMiB: round((before?.rssBytes ?? Number.NaN) / MIB, 1),
      rssMaxDuringMiB: round(Math.max(...during.map((x) => x.rssBytes!)) / MIB, 1),
    },
    faultAtS: round(fa / 1000, 1) ?? 0,
    clearAtS: round(ca / 1000, 1) ?? 0,
    ...(error !== undefined ? { error } : {}),
  };
}

/** Counts of each ending among records, for a scenario's figures. */
export function endingCounts(records: readonly RequestRecord[]): Record<Ending, number> {
  const out = Object.fromEntries(ENDINGS.map((e) => [e, 0])) as Record<Ending, number>;
  for (const r of records) out[r.ending]++;
  return out;
}
