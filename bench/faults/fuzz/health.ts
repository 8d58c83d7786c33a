/**
 * The gateway after the fuzz: `/healthz` says ok, `/admin/stats` shows no
 * request in flight on any backend (within a deadline: completion reports
 * go out through waitUntil), no backend ejected or out of rotation, and the
 * fuzzing key's `max_concurrent` slots are all free again — as many
 * concurrent streams as its cap are served whole (a slot kept by a client
 * that left would turn one of them into a 429 until KEY_SLOT_TTL_MS).
 */
import type { BackendStatus, UsageTotals } from "../../../src/worker/router/router-rpc";
import { MODEL } from "../rig";
import { parseSse } from "./sse-answer";

export interface HealthReport {
  readonly healthz: string;
  /** ms from the end of the traffic until no backend had a request in flight (undefined: never, within the deadline). */
  readonly drainedMs?: number;
  readonly backends: readonly BackendStatus[];
  readonly counters?: UsageTotals;
  /** ms until `cap` concurrent streams on the fuzzing key were all served whole (undefined: never). */
  readonly slotsFreeMs?: number;
  readonly problems: readonly string[];
}

interface StatsBody {
  pools?: Record<string, { ok?: boolean; backends?: BackendStatus[]; counters?: UsageTotals }>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function poolStats(
  url: string,
  adminToken: string,
): Promise<{ backends: BackendStatus[]; counters?: UsageTotals }> {
  const res = await fetch(`${url}/admin/stats`, {
    headers: { authorization: `Bearer ${adminToken}` },
    signal: AbortSignal.timeout(5000),
  });
  const pool = ((await res.json()) as StatsBody).pools?.[MODEL];
  return {
    backends: pool?.backends ?? [],
    ...(pool?.counters !== undefined ? { counters: pool.counters } : {}),
  };
}

/** `cap` concurrent small streams on `key`: true when every one is a whole 200 stream. */
async function capServed(url: string, key: string, cap: number): Promise<boolean> {
  const body = JSON.stringify({
    model: MODEL,
    stream: true,
    max_tokens: 24,
    messages: [{ role: "user", content: "slots" }],
  });
  const results = await Promise.all(
    Array.from({ length: cap }, async () => {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body,
        signal: AbortSignal.timeout(20_000),
      });
      const text = await res.text();
      return res.status === 200 && parseSse(text).done;
    }),
  );
  return results.every(Boolean);
}

export async function checkHealth(
  url: string,
  adminToken: string,
  fuzzKey: string,
  cap: number,
  deadlineMs: number,
): Promise<HealthReport> {
  const problems: string[] = [];
  const t0 = performance.now();
  let drainedMs: number | undefined;
  let stats = await poolStats(url, adminToken);
  while (performance.now() - t0 < deadlineMs) {
    if (stats.backends.length > 0 && stats.backends.every((b) => b.inflight === 0)) {
      drainedMs = performance.now() - t0;
      break;
    }
    await sleep(500);
    stats = await poolStats(url, adminToken);
  }
  if (drainedMs === undefined)
    problems.push(
      `in flight after ${deadlineMs} ms: ${stats.backends.map((b) => `${b.id}=${b.inflight}`).join(" ")}`,
    );
  for (const b of stats.backends) if (!b.healthy) problems.push(`backend ${b.id} out of rotation`);
  if ((stats.counters?.ejections ?? 0) > 0) problems.push(`${stats.counters?.ejections} ejections`);

  const hz = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5000) });
  const healthz = `${hz.status} ${(await hz.text()).slice(0, 100)}`;
  if (hz.status !== 200) problems.push(`/healthz ${healthz}`);

  let slotsFreeMs: number | undefined;
  const t1 = performance.now();
  while (performance.now() - t1 < deadlineMs) {
    if (await capServed(url, fuzzKey, cap)) {
      slotsFreeMs = performance.now() - t1;
      break;
    }
    await sleep(1000);
  }
  if (slotsFreeMs === undefined)
    problems.push(`the fuzzing key's ${cap} slots were not all free within ${deadlineMs} ms`);
  // The slot check's own requests have ended: nothing may be left in flight after them either.
  const after = await poolStats(url, adminToken);
  return {
    healthz,
    ...(drainedMs !== undefined ? { drainedMs } : {}),
    backends: after.backends,
    ...(after.counters !== undefined ? { counters: after.counters } : {}),
    ...(slotsFreeMs !== undefined ? { slotsFreeMs } : {}),
    problems,
  };
}
