/**
 * Faults through the real Worker and RouterDO against emulators told to
 * misbehave (bench/emulator fault injection): one client's request, a sick
 * backend or a busy one never costs other clients their answers.
 *
 * Each test builds its own fleet of the three fault-model emulators under
 * ids of its own, so health state never leaks between tests; deadlines are
 * short so hangs resolve in well under a second.
 */
import { createExecutionContext, runDurableObjectAlarm, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import type { FaultSpec } from "../../bench/emulator/fault-spec";
import worker from "../../src/index";
import {
  authHeaders,
  BACKEND_KEY,
  backendState,
  clearBackendFault,
  FAULT_MODEL,
  faultUrls,
  longPrompt,
  setBackendFault,
  settle,
} from "./helpers";

const VARS = {
  UPSTREAM_CONNECT_TIMEOUT_MS: "400",
  UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "1500",
  UPSTREAM_IDLE_TIMEOUT_MS: "400",
  HEALTH_PROBE_SECONDS: "1",
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stub = () => env.ROUTER.getByName(FAULT_MODEL);

/** BACKENDS for the fault fleet, ids `${tag}-1..3`. */
function fleet(tag: string): string {
  return JSON.stringify(
    faultUrls().map((url, i) => ({
      id: `${tag}-${i + 1}`,
      url,
      models: [FAULT_MODEL],
      apiKey: BACKEND_KEY,
      weight: 1,
      kvCacheTokens: 262144,
    })),
  );
}

function urlOf(tag: string, id: string): string {
  const i = Number(id.slice(tag.length + 1)) - 1;
  return faultUrls()[i]!;
}

interface Sent {
  readonly res: Response;
  readonly text: string;
}

/** One request through the Worker with the fault fleet; the body is read to its end. */
async function send(
  tag: string,
  user: string,
  opts: { stream?: boolean; vars?: Record<string, string>; seed?: string; signal?: AbortSignal } = {},
): Promise<Sent> {
  const ctx = createExecutionContext();
  const body = {
    model: FAULT_MODEL,
    max_tokens: 8,
    ...(opts.stream === true ? { stream: true } : {}),
    messages: [
      { role: "system", content: longPrompt(opts.seed ?? `${tag}-${user}`) },
      { role: "user", content: user },
    ],
  };
  const res = await worker.fetch(
    new Request("https://gateway.test/v1/chat/completions", {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify(body),
      ...(opts.signal !== undefined ? { signal: opts.signal } : {}),
    }),
    { ...env, ...VARS, ...opts.vars, BACKENDS: fleet(tag) },
    ctx,
  );
  const text = await res.text().catch((e: unknown) => `<<read failed: ${String(e)}>>`);
  await waitOnExecutionContext(ctx);
  return { res, text };
}

async function stats() {
  const s = await stub().stats();
  if (!s.ok) throw new Error(s.message);
  return s;
}

async function backend(id: string) {
  return (await stats()).backends.find((b) => b.id === id)!;
}

/** The pool's first arm as /admin/stats and /metrics read it. */
async function armFigures() {
  const s = await stub().snapshot();
  if (!s.ok) throw new Error(s.message);
  return s.snapshot.arms[0]!;
}

afterEach(async () => {
  for (const url of faultUrls()) await clearBackendFault(url);
});

/** Sets `spec` on one backend of the tag's fleet. */
async function fault(tag: string, id: string, spec: FaultSpec): Promise<void> {
  await setBackendFault(urlOf(tag, id), spec);
}

describe("a poison request", () => {
  it("a prompt every backend answers with 500, sent 4 times at once: no backend ejected, nobody else refused", async () => {
    const tag = "poison";
    const marker = "POISON-PILL-7731";
    for (const url of faultUrls()) await setBackendFault(url, { kind: "status", status: 500, match: marker });
    const poisoned = await Promise.all(
      [1, 2, 3, 4].map(() => send(tag, `please ${marker}`, { seed: "poison-shared" })),
    );
    for (const p of poisoned) expect(p.res.status).toBe(500);
    await settle(FAULT_MODEL);
    for (const b of (await stats()).backends) {
      expect(b.healthy, b.id).toBe(true);
      expect(b.consecutiveFailures, b.id).toBe(0);
    }
    for (let i = 0; i < 10; i++) {
      const { res } = await send(tag, `ordinary question ${i}`);
      expect(res.status).toBe(200);
    }
  });

  it("a backend that answers 500 to what others serve takes the blame, and is ejected after 3", async () => {
    const tag = "bad500";
    await fault(tag, `${tag}-2`, { kind: "status", status: 500 });
    for (let i = 0; i < 30 && (await backend(`${tag}-2`).catch(() => undefined))?.healthy !== false; i++) {
      const { res } = await send(tag, `q${i}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-prefix-gateway-backend")).not.toBe(`${tag}-2`);
      await settle(FAULT_MODEL);
    }
    const b2 = await backend(`${tag}-2`);
    expect(b2.healthy).toBe(false);
    expect(b2.consecutiveFailures).toBe(3);
  });
});

describe("retries before the first byte", () => {
  it.each([502, 503, 504])(
    "a %i is retried on another backend; the sick backend is ejected after 3",
    async (status) => {
      const tag = `s${status}`;
      await fault(tag, `${tag}-1`, { kind: "status", status });
      let retried = 0;
      for (
        let i = 0;
        i < 30 &&
        (await stats().catch(() => undefined))?.backends.find((b) => b.id === `${tag}-1`)?.healthy !== false;
        i++
      ) {
        const { res, text } = await send(tag, `q${i}`, { stream: i % 2 === 0 });
        expect(res.status).toBe(200);
        expect(res.headers.get("x-prefix-gateway-backend")).not.toBe(`${tag}-1`);
        if (i % 2 === 0) expect(text).toContain("data: [DONE]");
        await settle(FAULT_MODEL);
        retried = (await stats()).usage.retried;
      }
      expect((await backend(`${tag}-1`)).healthy).toBe(false);
      expect(retried).toBeGreaterThanOrEqual(3);
    },
  );

  it("the pool's counters count client requests: a 502 retried elsewhere that succeeds is one success, no failure, one retried", async () => {
    const tag = "pool502";
    await fault(tag, `${tag}-2`, { kind: "status", status: 502 });
    const before = (await stats().catch(() => undefined))?.usage;
    let sent = 0;
    let retried = 0;
    for (let i = 0; i < 20 && retried === 0; i++) {
      const { res } = await send(tag, `q${i}`);
      sent++;
      expect(res.status).toBe(200);
      await settle(FAULT_MODEL);
      retried = (await stats()).usage.retried - (before?.retried ?? 0);
    }
    expect(retried).toBe(1);
    // /healthz's usage: what the clients saw (all answered), the failed attempt only as retried.
    const after = (await stats()).usage;
    expect(after.completed - (before?.completed ?? 0)).toBe(sent);
    expect(after.failed - (before?.failed ?? 0)).toBe(0);
  });

  it("a 429 is retried elsewhere, keeps its backend out for its retry-after, and never ejects it", async () => {
    const tag = "busy";
    await fault(tag, `${tag}-3`, { kind: "status", status: 429, retryAfterSeconds: 30 });
    const armBefore = await armFigures();
    let hit = false;
    let sent = 0;
    for (let i = 0; i < 20 && !hit; i++) {
      const { res } = await send(tag, `q${i}`);
      sent++;
      expect(res.status).toBe(200);
      await settle(FAULT_MODEL);
      hit = (await backend(`${tag}-3`)).throttledUntil !== undefined;
    }
    // The arm counts client requests: the 429 retried elsewhere is one request, no error, one retried attempt.
    const armAfter = await armFigures();
    expect(armAfter.routed - armAfter.retried - (armBefore.routed - armBefore.retried)).toBe(sent);
    expect(armAfter.failed - armBefore.failed).toBe(0);
    expect(armAfter.retried - armBefore.retried).toBeGreaterThanOrEqual(1);
    const b3 = await backend(`${tag}-3`);
    expect(b3.healthy).toBe(true);
    expect(b3.throttledUntil! - Date.now()).toBeGreaterThan(20_000);
    // While throttled it gets nothing, though every other request would have been its share.
    const before = (await backendState(urlOf(tag, `${tag}-3`))).stats.requests;
    for (let i = 0; i < 9; i++) expect((await send(tag, `after ${i}`)).res.status).toBe(200);
    expect((await backendState(urlOf(tag, `${tag}-3`))).stats.requests).toBe(before);
  });

  it("a 503 with a retry-after is busy, like a 429: retried elsewhere, kept out for that long, never ejected", async () => {
    const tag = "shed";
    await fault(tag, `${tag}-2`, { kind: "status", status: 503, retryAfterSeconds: 30 });
    let hit = false;
    let answered = 0;
    for (let i = 0; i < 20 && !hit; i++) {
      const { res } = await send(tag, `q${i}`);
      expect(res.status).toBe(200);
      await settle(FAULT_MODEL);
      answered = (await backendState(urlOf(tag, `${tag}-2`))).stats.requests;
      hit = (await backend(`${tag}-2`)).throttledUntil !== undefined;
    }
    const b2 = await backend(`${tag}-2`);
    expect(answered).toBeGreaterThanOrEqual(1);
    expect(b2.healthy).toBe(true);
    expect(b2.consecutiveFailures).toBe(0);
    expect(b2.throttledUntil! - Date.now()).toBeGreaterThan(20_000);
    // Throttled, it gets nothing; however many requests pass, it is never ejected.
    const before = (await backendState(urlOf(tag, `${tag}-2`))).stats.requests;
    for (let i = 0; i < 9; i++) expect((await send(tag, `after ${i}`)).res.status).toBe(200);
    await settle(FAULT_MODEL);
    expect((await backendState(urlOf(tag, `${tag}-2`))).stats.requests).toBe(before);
    expect((await backend(`${tag}-2`)).healthy).toBe(true);
  });

  it("when every backend answers 429, the client gets 429 with the backend's retry-after", async () => {
    const tag = "allbusy";
    for (const url of faultUrls())
      await setBackendFault(url, { kind: "status", status: 429, retryAfterSeconds: 7 });
    const { res, text } = await send(tag, "anyone?");
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
    expect(text).toContain("error");
  });
});

describe("a hung backend", () => {
  it("a backend that accepts and never answers: its requests are retried elsewhere within the connect deadline, and it is ejected", async () => {
    const tag = "hang";
    await fault(tag, `${tag}-1`, { kind: "hang" });
    for (
      let i = 0;
      i < 30 &&
      (await stats().catch(() => undefined))?.backends.find((b) => b.id === `${tag}-1`)?.healthy !== false;
      i++
    ) {
      const t0 = Date.now();
      const { res, text } = await send(tag, `q${i}`, { stream: true });
      expect(res.status).toBe(200);
      expect(text).toContain("data: [DONE]");
      expect(Date.now() - t0).toBeLessThan(3000);
      await settle(FAULT_MODEL);
    }
    expect((await backend(`${tag}-1`)).healthy).toBe(false);
    // Its /health hangs too (probe timeout): still out after the probe.
    await fault(tag, `${tag}-1`, { kind: "hang", health: "follow" });
    await sleep(1100);
    await runDurableObjectAlarm(stub());
    expect((await backend(`${tag}-1`)).healthy).toBe(false);
  });

  it("a stream that goes silent mid-way ends within the idle deadline with an SSE error event, counted against the backend", async () => {
    const tag = "stall";
    for (const url of faultUrls()) await setBackendFault(url, { kind: "stall", afterChunks: 2 });
    const t0 = Date.now();
    const { res, text } = await send(tag, "long answer please", { stream: true });
    expect(res.status).toBe(200);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(text).not.toContain("[DONE]");
    const last = text.trim().split("\n\n").at(-1)!;
    expect(last.startsWith("data: ")).toBe(true);
    const err = JSON.parse(last.slice(6)) as { error: { code: string; type: string } };
    expect(err.error.code).toBe("upstream_idle_timeout");
    await settle(FAULT_MODEL);
    const s = await stats();
    expect(s.usage.failed).toBeGreaterThanOrEqual(1);
    expect(s.backends.some((b) => b.consecutiveFailures >= 1)).toBe(true);
  });
});

describe("a dying backend", () => {
  it("a stream cut mid-way ends with an SSE error event, is a failure, and counts against the backend", async () => {
    const tag = "cut";
    for (const url of faultUrls()) await setBackendFault(url, { kind: "cut", afterChunks: 3 });
    const { res, text } = await send(tag, "tell me a story", { stream: true });
    expect(res.status).toBe(200);
    expect(text).not.toContain("[DONE]");
    const last = text.trim().split("\n\n").at(-1)!;
    const err = JSON.parse(last.slice(6)) as { error: { code: string } };
    expect(err.error.code).toBe("upstream_stream_error");
    await settle(FAULT_MODEL);
    const s = await stats();
    const served = s.backends.find((b) => b.id === res.headers.get("x-prefix-gateway-backend"))!;
    expect(served.consecutiveFailures).toBe(1);
    expect(s.usage.failed).toBeGreaterThanOrEqual(1);
  });

  it("with every backend ejected the gateway routes anyway (fail open), and good answers bring them back", async () => {
    const tag = "allsick";
    const vars = { MAX_EJECTION_PERCENT: "100" };
    for (const url of faultUrls()) await setBackendFault(url, { kind: "status", status: 503 });
    for (let i = 0; i < 40; i++) {
      expect((await send(tag, `q${i}`, { vars })).res.status).toBe(503);
      await settle(FAULT_MODEL);
      if ((await stats()).backends.every((b) => !b.healthy)) break;
    }
    expect((await stats()).backends.every((b) => !b.healthy)).toBe(true);
    for (const url of faultUrls()) await clearBackendFault(url);
    // Nothing healthy: the pool still serves.
    for (let i = 0; i < 6; i++) expect((await send(tag, `again ${i}`, { vars })).res.status).toBe(200);
    await settle(FAULT_MODEL);
    expect((await stats()).backends.some((b) => b.healthy)).toBe(true);
  });
});

describe("a client that leaves", () => {
  it("before the response headers: the backend request is cancelled and the lease ends at once", async () => {
    const tag = "gone";
    for (const url of faultUrls()) await setBackendFault(url, { kind: "hang" });
    const before = await Promise.all(faultUrls().map(async (u) => (await backendState(u)).stats.abandoned));
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 150);
    const { res } = await send(tag, "never mind", {
      stream: true,
      signal: abort.signal,
      vars: { UPSTREAM_CONNECT_TIMEOUT_MS: "30000" },
    });
    expect(res.status).toBe(499);
    await settle(FAULT_MODEL, 2000);
    const after = await Promise.all(faultUrls().map(async (u) => (await backendState(u)).stats.abandoned));
    expect(after.reduce((a, b) => a + b, 0)).toBeGreaterThan(before.reduce((a, b) => a + b, 0));
    // Leaving is not the backend's fault.
    expect((await stats()).backends.every((b) => b.consecutiveFailures === 0)).toBe(true);
  });
});
