/**
 * The RouterDO's backend check (BACKEND_CHECK_SECONDS; README "Backend check"), in workerd against real
 * emulators (which list only `test-model`): a backend that serves another model name, a url with a path
 * prefix the server does not serve and an address nothing answers are each reported on /healthz (admin
 * only; never a url), on /admin/stats (the dashboard's source) and in one warning line each, while routing
 * goes on untouched; no route call waits for a slow check. A check that hangs ends at its deadline
 * (src/worker/backend-check/models-check.test.ts, without a real wait). Every other
 * workerd test runs with the check off (vitest.config.ts).
 */
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RouterDO } from "../../durable-objects/router-do";
import { testPoolSpec } from "../../src/worker/router/pool-spec-fixture";
import type { BackendCheckStatus, PoolSpec } from "../../src/worker/router/router-rpc";
import { ADMIN_TOKEN, BACKEND_KEY, backendUrl, faultServerUrl, gatewayWithEnv, MODEL } from "./helpers";
import { LAG_MS } from "./metrics-fault-server";

afterEach(() => {
  vi.restoreAllMocks();
});

type Stub = DurableObjectStub<RouterDO>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (bounded) until a check round has finished, running the alarm when it is set. */
async function checked(stub: Stub, timeoutMs = 8000): Promise<BackendCheckStatus> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await stub.stats();
    if (s.ok && s.backendCheck !== undefined && s.backendCheck.rounds >= 1) return s.backendCheck;
    if (Date.now() > until) throw new Error(`no check round after ${timeoutMs} ms`);
    await runDurableObjectAlarm(stub).catch(() => false);
    await sleep(20);
  }
}

function checkLines(spy: { mock: { calls: unknown[][] } }): Record<string, unknown>[] {
  return spy.mock.calls
    .map((a) => String(a[0]))
    .filter((l) => l.startsWith('{"msg":"backend_check"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("backend check", () => {
  it("reports another model name, a path the server does not serve and a dead address: /healthz (admin), /admin/stats, one warning each", async () => {
    const warn = vi.spyOn(console, "warn");
    const model = "check-wrong-name";
    const entry = (id: string, url: string, apiKey?: string) => ({
      id,
      url,
      models: [model],
      ...(apiKey !== undefined ? { apiKey } : {}),
      weight: 1,
      kvCacheTokens: 65536,
    });
    const overrides = {
      BACKEND_CHECK_SECONDS: "60",
      BACKENDS: JSON.stringify([
        // The same server the RouterDO's own BACKENDS names (so it sends the key), started as `test-model`.
        entry("emu-1", backendUrl("emu-1"), BACKEND_KEY),
        // A path prefix in front of a server at `/`.
        entry("emu-2", `${backendUrl("emu-2")}/vllm`, BACKEND_KEY),
        entry("dead-1", "http://127.0.0.1:9"),
      ]),
    };
    const ask = (content: string) =>
      gatewayWithEnv(overrides, "/v1/chat/completions", {
        method: "POST",
        headers: { authorization: "Bearer test-client-key-alpha", "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content }], max_tokens: 4 }),
      });
    // Clients get what the backend says (a 404 is relayed by design); the check is what tells the operator.
    expect([404, 502]).toContain((await ask("first")).status);
    const stub = env.ROUTER.getByName(model);
    const status = await checked(stub);
    expect(status.intervalSeconds).toBe(60);
    expect(status.backends["emu-1"]).toMatchObject({
      state: "model_not_listed",
      reachable: true,
      status: 200,
      model: "absent",
      listed: ["test-model"],
    });
    expect(status.backends["emu-2"]).toMatchObject({ state: "bad_status", reachable: true, status: 404 });
    expect(status.backends["dead-1"]).toMatchObject({ state: "unreachable", reachable: false });

    // /healthz with the admin token shows it, without a url or a key; without the token, nothing of the fleet.
    const admin = await gatewayWithEnv(overrides, "/healthz", {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const text = await admin.text();
    const body = JSON.parse(text) as {
      pools: Record<string, { backendCheck?: BackendCheckStatus; instanceStartedAt?: number }>;
    };
    expect(body.pools[model]!.backendCheck!.backends["emu-1"]!.state).toBe("model_not_listed");
    expect(text).not.toContain("127.0.0.1");
    expect(text).not.toContain(BACKEND_KEY);
    const open = await gatewayWithEnv(overrides, "/healthz");
    expect(await open.json()).toEqual({ status: "ok", config: { ok: true } });

    // The dashboard reads /admin/stats: each backend carries its latest check.
    const stats = (await (
      await gatewayWithEnv(overrides, "/admin/stats", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).json()) as {
      pools: Record<string, { backends: { id: string; check?: { state: string; status?: number } }[] }>;
    };
    const checks = Object.fromEntries(stats.pools[model]!.backends.map((b) => [b.id, b.check]));
    expect(checks).toMatchObject({
      "emu-1": { state: "model_not_listed", status: 200 },
      "emu-2": { state: "bad_status", status: 404 },
      "dead-1": { state: "unreachable" },
    });

    // One warning per backend whose state is not ok, naming the pool and the backend (never its url).
    const lines = checkLines(warn);
    expect(lines.map((l) => l.backend).sort()).toEqual(["dead-1", "emu-1", "emu-2"]);
    expect(lines.every((l) => l.model === model && l.level === "warn" && l.was === "unchecked")).toBe(true);
    expect(JSON.stringify(lines)).not.toContain("127.0.0.1");
    // Report only: nothing was ejected or drained by it.
    const s = await stub.stats();
    expect(s.ok && s.usage.ejections).toBe(0);
  });

  it("a backend that lists the model is ok, silently; a slow check holds up no route call", async () => {
    const warn = vi.spyOn(console, "warn");
    const stub = env.ROUTER.getByName("check-ok");
    const spec: PoolSpec = {
      ...testPoolSpec(
        [
          { id: "emu-3", url: backendUrl("emu-3") },
          // Answers its list (test-model) after LAG_MS.
          { id: "lag-1", url: `${faultServerUrl()}/lag` },
        ],
        { backendCheckSeconds: 60, healthProbeSeconds: 30 },
      ),
      model: MODEL,
    };
    const route = async (key: number, withSpec: boolean) => {
      const started = Date.now();
      const r = await stub.route({
        fleetVersion: "ok1",
        ...(withSpec ? { spec } : {}),
        blocks: [key, key + 1],
        promptTokens: 32,
      });
      if (!r.ok) throw new Error(r.message);
      await stub.complete(r.leaseId, { ok: true });
      return Date.now() - started;
    };
    await route(1, true);
    // The round starts (the alarm is due at once) and waits LAG_MS on lag-1; route meanwhile.
    const roundStarted = Date.now();
    const alarm = runDurableObjectAlarm(stub).catch(() => false);
    const during: number[] = [];
    for (let k = 10; k < 15; k++) during.push(await route(k * 10, false));
    const routedBy = Date.now() - roundStarted;
    await alarm;
    const status = await checked(stub);
    expect(status.backends["emu-3"]).toMatchObject({ state: "ok", status: 200, model: "listed" });
    expect(status.backends["lag-1"]).toMatchObject({ state: "ok", status: 200, model: "listed" });
    // Five route calls ended while the round still waited on lag-1: none waited for it.
    expect(routedBy).toBeLessThan(LAG_MS);
    expect(Math.max(...during)).toBeLessThan(LAG_MS / 2);
    expect(checkLines(warn)).toEqual([]);
  });

  it("off (the default here): no check, no status", async () => {
    const stub = env.ROUTER.getByName("check-off");
    const spec = { ...testPoolSpec([{ id: "emu-4", url: backendUrl("emu-4") }]), model: MODEL };
    const r = await stub.route({ fleetVersion: "off1", spec, blocks: [5], promptTokens: 16 });
    if (!r.ok) throw new Error(r.message);
    await stub.complete(r.leaseId, { ok: true });
    await runDurableObjectAlarm(stub).catch(() => false);
    const s = await stub.stats();
    expect(s.ok && s.backendCheck).toBeUndefined();
  });
});
