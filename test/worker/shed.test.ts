/**
 * Load shedding (MAX_INFLIGHT_PER_BACKEND, bench/results/red-team.md "Load shedding"): with the bound on, a
 * request that finds every usable backend at its bound is answered at once with a 429 (OpenAI's slow_down) and
 * a retry-after, while the requests in flight end whole; a lease's end makes room for the next request; a
 * drained backend is no room; with the bound off (the default) the same burst is all served. Against
 * test/worker/metrics-fault-server.ts /busy: a prompt with "queued" gets its first event after 2.5 s and ends,
 * any other streams a token every 200 ms for 4 s.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  ADMIN_TOKEN,
  authHeaders,
  expectOpenAIError,
  faultServerPool,
  gatewayWithEnv,
  openWithEnv,
  poolStats,
  settle,
} from "./helpers";

afterEach(() => {
  vi.restoreAllMocks();
});

function pool(model: string, bound: number): { BACKENDS: string; MAX_INFLIGHT_PER_BACKEND: string } {
  return { ...faultServerPool(model, "busy", 2), MAX_INFLIGHT_PER_BACKEND: String(bound) };
}

function ask(model: string, content: string): RequestInit {
  return {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model, stream: true, max_tokens: 8, messages: [{ role: "user", content }] }),
  };
}

/** Opens `n` streams on the pool (each answered with its headers at once), distinct prompts. */
async function openStreams(env: Partial<Env>, model: string, prompts: readonly string[]) {
  const open = [];
  for (const p of prompts) {
    const o = await openWithEnv(env, "/v1/chat/completions", ask(model, p));
    expect(o.res.status).toBe(200);
    open.push(o);
  }
  return open;
}

/** Reads a stream to its end: it must end whole, with [DONE]. */
async function endsWhole(res: Response): Promise<void> {
  const text = await res.text();
  expect(text).not.toContain("error");
  expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
}

describe("load shedding: MAX_INFLIGHT_PER_BACKEND", () => {
  it("bound 2 on 2 backends: the 5th concurrent request gets a 429 with retry-after at once, the 4 in flight end whole", async () => {
    const model = "shed-burst";
    const env = pool(model, 2);
    const spy = vi.spyOn(console, "log");
    const open = await openStreams(env, model, ["r1", "r2", "r3", "r4"]);
    const s = await poolStats(model);
    expect(s.backends.map((b) => b.inflight)).toEqual([2, 2]);
    const started = Date.now();
    const res = await gatewayWithEnv(env, "/v1/chat/completions", ask(model, "r5"));
    // At once: the four in flight stream for 4 s; a timeout would be seconds.
    expect(Date.now() - started).toBeLessThan(1000);
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const message = await expectOpenAIError(res, 429, "slow_down");
    expect(message).toContain("at capacity");
    expect(message).toContain("MAX_INFLIGHT_PER_BACKEND");
    for (const o of open) await endsWhole(o.res);
    await Promise.all(open.map((o) => o.settled()));
    await settle(model);
    const after = await poolStats(model);
    // Not a backend fault, no retry, no ejection: counted as shed only.
    expect(after.usage.shed).toBe(1);
    expect(after.usage.completed).toBe(4);
    expect(after.usage.failed).toBe(0);
    expect(after.usage.retried).toBe(0);
    expect(after.usage.ejections).toBe(0);
    expect(after.backends.every((b) => b.healthy && b.consecutiveFailures === 0)).toBe(true);
    const lines = spy.mock.calls.map((a) => String(a[0])).filter((l) => l.startsWith('{"msg":"request"'));
    const shedLines = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.shed);
    expect(shedLines).toHaveLength(1);
    expect(shedLines[0]).toMatchObject({ shed: "router", status: 429, error: "slow_down" });
  });

  it("when a lease ends, the next request is served (its end rides on that request's route call)", async () => {
    const model = "shed-next";
    const env = pool(model, 2);
    // One answer that ends after 2.5 s ("queued"), three that stream for 4 s.
    const open = await openStreams(env, model, ["queued q1", "r2", "r3", "r4"]);
    await expectOpenAIError(
      await gatewayWithEnv(env, "/v1/chat/completions", ask(model, "r5")),
      429,
      "slow_down",
    );
    await endsWhole(open[0]!.res);
    await open[0]!.settled();
    // Three still stream: the freed slot is the only room.
    const next = await openWithEnv(env, "/v1/chat/completions", ask(model, "r6"));
    expect(next.res.status).toBe(200);
    await endsWhole(next.res);
    for (const o of open.slice(1)) await endsWhole(o.res);
    await Promise.all([next.settled(), ...open.slice(1).map((o) => o.settled())]);
    await settle(model);
    expect((await poolStats(model)).usage.shed).toBe(1);
  });

  it("a drained backend is no room: with one of two drained, the 3rd concurrent request is shed", async () => {
    const model = "shed-drained";
    const env = pool(model, 2);
    // A first request creates the pool's RouterDO; then the operator drains backend 2.
    const warm = await gatewayWithEnv(env, "/v1/chat/completions", ask(model, "queued warm"));
    expect(warm.status).toBe(200);
    await settle(model);
    const drained = await gatewayWithEnv(env, `/admin/backends/${model}-2/drain`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(drained.status).toBe(200);
    const open = await openStreams(env, model, ["r1", "r2"]);
    const s = await poolStats(model);
    expect(s.backends.find((b) => b.id === `${model}-1`)?.inflight).toBe(2);
    expect(s.backends.find((b) => b.id === `${model}-2`)?.inflight).toBe(0);
    await expectOpenAIError(
      await gatewayWithEnv(env, "/v1/chat/completions", ask(model, "r3")),
      429,
      "slow_down",
    );
    for (const o of open) await endsWhole(o.res);
    await Promise.all(open.map((o) => o.settled()));
    await settle(model);
  });

  it("guard: with the bound off (the default), the same burst of 5 is all served", async () => {
    const model = "shed-off";
    const env = faultServerPool(model, "busy", 2);
    const open = await openStreams(env, model, ["r1", "r2", "r3", "r4", "r5"]);
    for (const o of open) await endsWhole(o.res);
    await Promise.all(open.map((o) => o.settled()));
    await settle(model);
    expect((await poolStats(model)).usage.shed).toBe(0);
  });
});
