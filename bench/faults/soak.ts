/**
 * The fault soak: 20 closed-loop streaming clients through the gateway in
 * workerd for a bounded time, in front of 4 emulators of which
 *   - A flaps: killed (stop(): connections refused, streams in flight cut)
 *     for `downS` of every `flapPeriodS`, then restarted on the same port;
 *   - B answers 429 (with retry-after) to a seeded share of its requests.
 * Every request is recorded (status, ending, backend, route, TTFT; retried
 * from the gateway's log line), the RouterDO's stats and workerd's RSS are
 * sampled, and soak-verdict.ts judges the run.
 */
import { type Summary, summarize } from "../latency-summary";
import { type RequestRecord, RunClock, sendOne, startTraffic, type Traffic } from "./clients";
import type { Ending } from "./ending";
import { judgeMemory, type MemoryVerdict } from "./flatness";
import { type GatewayLine, readGatewayLog } from "./gateway-log";
import { round, waitFor } from "./measure";
import { DEFAULT_SHAPE, ordinaryBody } from "./prompts";
import { GATEWAY_KEY, type PoolStats, startRig } from "./rig";
import { type Sample, type Sampler, startSampler } from "./samples";
import { judgeSoak, type Kill, type SoakVerdict } from "./soak-verdict";

export interface SoakOptions {
  readonly durationS: number;
  readonly clients: number;
  readonly flapPeriodS: number;
  readonly downS: number;
  /** Share of B's requests answered 429. */
  readonly throttleShare: number;
  readonly retryAfterS: number;
  readonly sampleEveryS: number;
  readonly settleS: number;
  readonly rssToleranceMiBPerMin: number;
}

export const DEFAULT_SOAK: SoakOptions = {
  durationS: 600,
  clients: 20,
  flapPeriodS: 30,
  downS: 10,
  throttleShare: 1 / 3,
  retryAfterS: 1,
  sampleEveryS: 2,
  settleS: 10,
  rssToleranceMiBPerMin: 1,
};

/** Requests by one key (status, backend, route), with how many of them failed. */
export interface Tally {
  readonly requests: number;
  readonly notDone: number;
}

/** A compact row of the sampled gauges. */
export interface SeriesRow {
  readonly tS: number;
  readonly rssMiB: number | null;
  readonly cpuMs: number;
  readonly leases: number | null;
  readonly indexBytes: number | null;
  /** Per backend, in order: in flight, and "+" in rotation / "-" ejected / "t" throttled. */
  readonly backends: string;
  readonly retried: number | null;
  readonly ejections: number | null;
}

export interface SoakResult {
  readonly options: SoakOptions;
  readonly flapping: string;
  readonly throttling: string;
  readonly wallS: number;
  readonly requests: number;
  readonly endings: Readonly<Record<Ending, number>>;
  readonly byStatus: Readonly<Record<string, Tally>>;
  readonly byBackend: Readonly<Record<string, Tally>>;
  readonly byRoute: Readonly<Record<string, Tally>>;
  /** From the gateway's log lines, joined by request id. */
  readonly retried: number;
  readonly retryRefused: number;
  readonly loggedRequests: number;
  readonly ttftMs: {
    readonly all: Summary;
    readonly aDown: Summary;
    readonly aUp: Summary;
    readonly retried: Summary;
  };
  readonly kills: readonly Kill[];
  readonly throttles: number;
  readonly emulators: readonly { readonly id: string; readonly stats: unknown }[];
  readonly finalLeases: number | null;
  readonly leasesZeroAfterMs: number | null;
  readonly finalUsage: unknown;
  readonly memory: MemoryVerdict;
  readonly verdict: Omit<SoakVerdict, "failures">;
  /** Every failed request (up to 100), with the gateway's log line for it. */
  readonly failures: readonly (RequestRecord & { readonly log?: GatewayLine })[];
  readonly series: readonly SeriesRow[];
}

function tally(records: readonly RequestRecord[], key: (r: RequestRecord) => string): Record<string, Tally> {
  const out: Record<string, { requests: number; notDone: number }> = {};
  for (const r of records) {
    const k = key(r);
    const t = out[k] ?? { requests: 0, notDone: 0 };
    out[k] = t;
    t.requests++;
    if (r.ending !== "done") t.notDone++;
  }
  return out;
}

function seriesRow(s: Sample): SeriesRow {
  return {
    tS: round(s.tMs / 1000, 1) ?? 0,
    rssMiB: round((s.rssBytes ?? Number.NaN) / (1024 * 1024), 1),
    cpuMs: s.cpuMs,
    leases: s.leases ?? null,
    indexBytes: s.indexBytes ?? null,
    backends: (s.backends ?? [])
      .map((b) => `${b.inflight}${b.healthy ? (b.throttled ? "t" : "+") : "-"}`)
      .join(" "),
    retried: s.usage?.retried ?? null,
    ejections: s.usage?.ejections ?? null,
  };
}

/** Whether `t` falls in a window where the flapping backend was down. */
function downAt(t: number, kills: readonly Kill[], downMs: number): boolean {
  return kills.some((k) => t >= k.atMs && t < k.atMs + downMs);
}

interface Run {
  readonly o: SoakOptions;
  readonly ids: readonly string[];
  readonly records: readonly RequestRecord[];
  readonly lines: ReadonlyMap<string, GatewayLine>;
  readonly samples: readonly Sample[];
  readonly kills: readonly Kill[];
  readonly throttles: number;
  readonly emulators: SoakResult["emulators"];
  readonly final: PoolStats | undefined;
  readonly leasesZeroAfterMs: number | undefined;
  readonly wallMs: number;
  readonly stoppedAt: number;
}

function soakResult(run: Run): SoakResult {
  const { o, records, lines, kills } = run;
  const memory = judgeMemory(
    run.samples.filter((s) => s.tMs <= run.stoppedAt),
    o.rssToleranceMiBPerMin,
  );
  const verdict = judgeSoak({
    records,
    kills,
    throttles: run.throttles,
    finalLeases: run.final?.leases,
    memory,
  });
  const done = records.filter((r) => r.ending === "done");
  const downMs = o.downS * 1000;
  const retried = (r: RequestRecord) => lines.get(r.id)?.retriedFrom !== undefined;
  const ttft = (rs: readonly RequestRecord[]) => summarize(rs.map((r) => r.ttftMs ?? Number.NaN));
  const { failures, ...verdictRest } = verdict;
  return {
    options: o,
    flapping: `${run.ids[0]}: killed for ${o.downS} s of every ${o.flapPeriodS} s, restarted on the same port`,
    throttling: `${run.ids[1]}: 429 with retry-after ${o.retryAfterS} s to ${round(o.throttleShare * 100, 1)}% of its requests`,
    wallS: round(run.wallMs / 1000, 1) ?? 0,
    requests: records.length,
    endings: verdict.endings,
    byStatus: tally(records, (r) => String(r.status)),
    byBackend: tally(records, (r) => r.backend ?? "none"),
    byRoute: tally(records, (r) => r.route ?? "none"),
    retried: records.filter(retried).length,
    retryRefused: records.filter((r) => lines.get(r.id)?.retryRefused === true).length,
    loggedRequests: records.filter((r) => lines.has(r.id)).length,
    ttftMs: {
      all: ttft(done),
      aDown: ttft(done.filter((r) => downAt(r.startMs, kills, downMs))),
      aUp: ttft(done.filter((r) => !downAt(r.startMs, kills, downMs))),
      retried: ttft(done.filter(retried)),
    },
    kills,
    throttles: run.throttles,
    emulators: run.emulators,
    finalLeases: run.final?.leases ?? null,
    leasesZeroAfterMs: round(run.leasesZeroAfterMs),
    finalUsage: run.final?.usage ?? null,
    memory,
    verdict: verdictRest,
    failures: failures.slice(0, 100).map((r) => {
      const line = lines.get(r.id);
      return line === undefined ? r : { ...r, log: line };
    }),
    series: run.samples.map(seriesRow),
  };
}

export async function runSoak(
  o: SoakOptions,
  configPath: string,
  log: (line: string) => void,
  cells = 1,
): Promise<SoakResult> {
  const rig = await startRig({ emulators: 4, configPath, cells });
  const clock = new RunClock();
  const sleepUntil = async (tMs: number) => {
    const wait = tMs - clock.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  };
  const [a, b] = rig.emulators;
  const durationMs = o.durationS * 1000;
  const downMs = o.downS * 1000;
  const kills: Kill[] = [];
  let sampler: Sampler | undefined;
  let traffic: Traffic | undefined;
  let progress: NodeJS.Timeout | undefined;
  try {
    const warm = await sendOne(
      {
        url: rig.url,
        apiKey: GATEWAY_KEY,
        body: ordinaryBody(DEFAULT_SHAPE, "warm", 0, 0),
        id: "soak-warmup",
        timeoutMs: 60_000,
      },
      clock,
    );
    if (warm.ending !== "done") throw new Error(`warm-up failed: ${warm.status} ${warm.error ?? ""}`);
    b!.setFault({
      kind: "status",
      status: 429,
      probability: o.throttleShare,
      retryAfterSeconds: o.retryAfterS,
      seed: 7,
    });
    const start = clock.now();
    const s = startSampler(rig, clock, o.sampleEveryS * 1000);
    sampler = s;
    const t = startTraffic({
      url: () => rig.url,
      apiKey: GATEWAY_KEY,
      clients: o.clients,
      body: (c, n) => ordinaryBody(DEFAULT_SHAPE, "soak", c, n),
      idPrefix: "soak",
      clock,
      timeoutMs: 120_000,
    });
    traffic = t;
    progress = setInterval(() => {
      const last = s.samples.at(-1);
      const bad = t.records.filter((r) => r.ending !== "done").length;
      log(
        `  t=${((clock.now() - start) / 1000).toFixed(0)} s: ${t.records.length} requests (${bad} not [DONE]), ` +
          `leases ${last?.leases ?? "?"}, rss ${((last?.rssBytes ?? 0) / 1048576).toFixed(0)} MiB, ` +
          `backends ${last === undefined ? "?" : seriesRow(last).backends}`,
      );
    }, 30_000);
    // Full cycles only, so A is up when the clients stop.
    for (let k = 1; k * o.flapPeriodS * 1000 <= durationMs; k++) {
      const killAt = start + k * o.flapPeriodS * 1000 - downMs;
      await sleepUntil(killAt);
      kills.push({ backend: rig.ids[0]!, atMs: clock.now() });
      await a!.stop();
      await sleepUntil(killAt + downMs);
      await a!.start();
    }
    await sleepUntil(start + durationMs);
    clearInterval(progress);
    await t.stop();
    const stoppedAt = clock.now();
    const leasesZeroAfterMs = await waitFor(
      async () => (await rig.poolStats())?.leases === 0,
      o.settleS * 1000,
      250,
    );
    const final = await rig.poolStats();
    await s.stop();
    return soakResult({
      o,
      ids: rig.ids,
      records: t.records,
      lines: await readGatewayLog(rig.gateway.logFile),
      samples: s.samples,
      kills,
      throttles: b!.state().stats.faulted.status,
      emulators: rig.emulators.map((e, i) => ({ id: rig.ids[i]!, stats: e.state().stats })),
      final,
      leasesZeroAfterMs,
      wallMs: stoppedAt - start,
      stoppedAt,
    });
  } finally {
    clearInterval(progress);
    await traffic?.stop();
    await sampler?.stop();
    await rig.close();
  }
}
