/**
 * The RouterDO's scrape of its backends' /metrics (ENGINE_SCRAPE_MS), in
 * workerd against real emulators and a fake backend whose /metrics
 * misbehaves (metrics-fault-server.ts): off, it reads nothing; on, the alarm
 * reads every backend and prefix_aware steers new prefixes away from an
 * engine busy with load sent around the gateway; a scrape that fails, hangs
 * or floods is cut at its bounds and never fails or delays a route call.
 * Every other workerd test runs with the scrape off (vitest.config.ts).
 */
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SCRAPE_DEADLINE_MAX_MS } from "../../durable-objects/engine-scrape";
import type { RouterDO } from "../../durable-objects/router-do";
import { testPoolSpec } from "../../src/worker/router/pool-spec-fixture";
import type { EngineScrapeStatus, PoolSpec } from "../../src/worker/router/router-rpc";
import { BACKEND_KEY, backendState } from "./helpers";

const SCRAPE_MODEL = "scrape-model";
const testEnv = env as unknown as { TEST_SCRAPE_URLS: string; TEST_METRICS_FAULT_URL: string };
const scrapeUrls = () => JSON.parse(testEnv.TEST_SCRAPE_URLS) as [string, string];
const faultBase = () => testEnv.TEST_METRICS_FAULT_URL;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function spec(engineScrapeMs: number, backends: { id: string; url: string }[]): PoolSpec {
  return testPoolSpec(backends, { engineScrapeMs, healthProbeSeconds: 30 });
}

type Stub = DurableObjectStub<RouterDO>;

/** Routes a request for a new prefix starting at `key` and completes it at once; the backend it went to. */
async function routeAndComplete(stub: Stub, version: string, key: number, s?: PoolSpec): Promise<string> {
  const blocks = Array.from({ length: 64 }, (_, i) => key * 1000 + i);
  const r = await stub.route({
    fleetVersion: version,
    ...(s ? { spec: s } : {}),
    blocks,
    promptTokens: 1024,
  });
  if (!r.ok) throw new Error(r.message);
  await stub.complete(r.leaseId, { ok: true });
  return r.backendId;
}

async function scrapeStatus(stub: Stub): Promise<EngineScrapeStatus | undefined> {
  const s = await stub.stats();
  if (!s.ok) throw new Error(s.message);
  return s.engineScrape;
}

/** Waits (bounded) until `rounds` scrape rounds have finished, running the alarm when it is set. */
async function roundsDone(stub: Stub, rounds: number, timeoutMs = 8000): Promise<EngineScrapeStatus> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await scrapeStatus(stub);
    if (s !== undefined && s.rounds >= rounds) return s;
    if (Date.now() > until)
      throw new Error(`scrape: ${s?.rounds ?? 0} of ${rounds} rounds after ${timeoutMs} ms`);
    // The alarm may already be running (or have run) on its own; either way the round is counted when it ends.
    await runDurableObjectAlarm(stub).catch(() => false);
    await sleep(20);
  }
}

/** Holds `n` long streamed requests on the emulator at `url`, sent straight to it (around the gateway). */
async function loadAround(url: string, n: number): Promise<() => Promise<void>> {
  const aborts = Array.from({ length: n }, () => new AbortController());
  const responses = await Promise.all(
    aborts.map((a, i) =>
      fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        signal: a.signal,
        headers: { authorization: `Bearer ${BACKEND_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: SCRAPE_MODEL,
          messages: [{ role: "user", content: `another client's request ${i}` }],
          max_tokens: 4000,
          stream: true,
        }),
      }),
    ),
  );
  for (const r of responses) expect(r.status).toBe(200);
  // Until the engine reports them running (prefill done).
  const until = Date.now() + 5000;
  for (;;) {
    const text = await (await fetch(`${url}/metrics`)).text();
    const running = Number(/^vllm:num_requests_running\{[^}]*\} (\S+)$/m.exec(text)?.[1] ?? 0);
    if (running >= n) break;
    if (Date.now() > until) throw new Error(`only ${running} of ${n} running on ${url}`);
    await sleep(20);
  }
  return async () => {
    for (const a of aborts) a.abort();
    await Promise.all(responses.map((r) => r.body?.cancel().catch(() => {})));
  };
}

const KEYS = [11, 12, 13, 14, 15, 16, 17, 18, 19, 20];

describe("RouterDO engine scrape", () => {
  it("off (ENGINE_SCRAPE_MS 0): no /metrics is ever read, no scrape status", async () => {
    const [a, b] = scrapeUrls();
    const before =
      (await backendState(a)).stats.metricsScrapes + (await backendState(b)).stats.metricsScrapes;
    const stub = env.ROUTER.getByName("scrape-off");
    const s = spec(0, [
      { id: "off-a", url: a },
      { id: "off-b", url: b },
    ]);
    await routeAndComplete(stub, "off1", 1, s);
    for (const k of KEYS) await routeAndComplete(stub, "off1", k);
    await runDurableObjectAlarm(stub).catch(() => false);
    expect(await scrapeStatus(stub)).toBeUndefined();
    const after = (await backendState(a)).stats.metricsScrapes + (await backendState(b)).stats.metricsScrapes;
    expect(after).toBe(before);
  });

  it("on: the alarm reads every backend, and new prefixes go around an engine busy with another client's load", async () => {
    const [a, b] = scrapeUrls();
    const backends = [
      { id: "sa", url: a },
      { id: "sb", url: b },
    ];
    // Without the scrape the gateway cannot see that load: its ring puts some of these prefixes on sa.
    const blind = env.ROUTER.getByName("scrape-blind");
    await routeAndComplete(blind, "blind1", 1, spec(0, backends));
    const release = await loadAround(a, 12);
    try {
      const blindPicks = [];
      for (const k of KEYS) blindPicks.push(await routeAndComplete(blind, "blind1", k));
      expect(blindPicks.filter((x) => x === "sa").length).toBeGreaterThan(0);

      const scrapesBefore = (await backendState(a)).stats.metricsScrapes;
      const stub = env.ROUTER.getByName("scrape-on");
      // Each scrape may take the interval (up to 2 s) and a reading serves three intervals: long enough for
      // a loaded machine's /metrics answer and the ten route calls below (at 100 ms neither always held).
      const intervalMs = SCRAPE_DEADLINE_MAX_MS;
      await routeAndComplete(stub, "on1", 1, spec(intervalMs, backends));
      const status = await roundsDone(stub, 1);
      expect(status).toMatchObject({ intervalMs, readings: 2, failing: {} });
      expect((await backendState(a)).stats.metricsScrapes).toBeGreaterThan(scrapesBefore);
      const picks = [];
      for (const k of KEYS) picks.push(await routeAndComplete(stub, "on1", k));
      // The same prefixes, with the readings: none on the engine running 12 requests we did not send.
      expect(picks).toEqual(KEYS.map(() => "sb"));
    } finally {
      await release();
    }
  });

  it("a scrape that fails, hangs, stalls or floods is cut at its bounds and never fails or holds up routing", async () => {
    const [a] = scrapeUrls();
    const f = faultBase();
    const stub = env.ROUTER.getByName("scrape-faults");
    // The longest round there is: each scrape's deadline is the interval, up to SCRAPE_DEADLINE_MAX_MS (2 s).
    // A route call the round held up would take about that long; one that was not takes a few ms, or some
    // hundreds on a loaded machine (663 ms was seen against the 500 ms bound a 1 s round allowed).
    const roundMs = SCRAPE_DEADLINE_MAX_MS;
    const s = spec(roundMs, [
      { id: "good", url: a },
      { id: "slow", url: `${f}/slow` },
      { id: "stall", url: `${f}/stall` },
      { id: "huge", url: `${f}/huge` },
      { id: "html", url: `${f}/html` },
      { id: "dead", url: "http://127.0.0.1:9" },
    ]);
    await routeAndComplete(stub, "f1", 1, s);
    // The round starts now (alarm due at the first route) and takes its deadline (slow, stall).
    const alarm = runDurableObjectAlarm(stub).catch(() => false);
    await sleep(50);
    let routedDuringRound = 0;
    for (const k of KEYS) {
      const t0 = Date.now();
      await routeAndComplete(stub, "f1", k);
      expect(Date.now() - t0).toBeLessThan(roundMs / 2);
      if (((await scrapeStatus(stub))?.rounds ?? 0) === 0) routedDuringRound++;
    }
    // Route calls were answered while the slow scrapes were still waiting.
    expect(routedDuringRound).toBeGreaterThan(0);
    await alarm;
    const status = await roundsDone(stub, 1);
    expect(status.readings).toBe(1);
    expect(status.failures).toBeGreaterThanOrEqual(5);
    expect(Object.keys(status.failing).sort()).toEqual(["dead", "html", "huge", "slow", "stall"]);
    expect(status.failing.slow!.reason).toBe("timeout (connect)");
    expect(status.failing.stall!.reason).toBe("timeout (body)");
    expect(status.failing.huge!.reason).toBe("no vLLM or SGLang metric found in the first 262144 bytes");
    expect(status.failing.html!.reason).toBe("no vLLM or SGLang metric found");
    expect(status.failing.dead!.reason).toMatch(/^connect failed/);
    // The round took its deadline, not the 30 s the slow and stalled backends would have held it.
    expect(status.lastRoundMs).toBeLessThan(2 * roundMs);
    // Routing goes on, with the one reading it has.
    expect(["good", "slow", "stall", "huge", "html", "dead"]).toContain(
      await routeAndComplete(stub, "f1", 99),
    );
  });
});
