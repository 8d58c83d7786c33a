/**
 * The admin API through the real Worker and RouterDO, against real
 * emulators: the admin token guards it (OpenAI-style 401s), a drained
 * backend takes no new requests and finishes the stream it has, the last
 * backend in rotation cannot be drained, a reset empties a pool's affinity
 * index, and the dashboard page is served with a strict CSP and no data.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { DrainInput } from "../../src/worker/router/router-rpc";
import {
  ADMIN_TOKEN,
  authHeaders,
  BACKEND_KEY,
  backendRow,
  CLIENT_KEY,
  chatBody,
  expectOpenAIError,
  gateway,
  gatewayWithEnv,
  interceptRouterMethod,
  longPrompt,
  openWithEnv,
  SPARE_MODEL,
  spareUrls,
} from "./helpers";

const admin = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${ADMIN_TOKEN}`, ...extra });

/** The spare-model pool with two backends of this test's own ids. */
function fleetEnv(): { BACKENDS: string } {
  const [a, b] = spareUrls() as [string, string];
  return {
    BACKENDS: JSON.stringify(
      [
        { id: "adm-a", url: a },
        { id: "adm-b", url: b },
      ].map((x) => ({ ...x, models: [SPARE_MODEL], apiKey: BACKEND_KEY, weight: 1, kvCacheTokens: 262144 })),
    ),
  };
}

function spareChat(seed: string, extra: Record<string, unknown> = {}): RequestInit {
  const body = JSON.parse(chatBody(longPrompt(seed), "q", extra)) as Record<string, unknown>;
  return { method: "POST", headers: authHeaders(), body: JSON.stringify({ ...body, model: SPARE_MODEL }) };
}

afterEach(() => {
  vi.restoreAllMocks();
});

const post = (path: string) => gatewayWithEnv(fleetEnv(), path, { method: "POST", headers: admin() });

describe("admin API", () => {
  it.each([
    ["GET", "/admin/stats"],
    ["GET", "/metrics"],
    ["GET", "/admin/backends"],
    ["POST", "/admin/backends/emu-1/drain"],
    ["POST", `/admin/pools/test-model/reset-affinity`],
  ])("%s %s needs the admin token, not a client key", async (method, path) => {
    await expectOpenAIError(await gateway(path, { method }), 401, "invalid_admin_token");
    const asClient = await gateway(path, { method, headers: { authorization: `Bearer ${CLIENT_KEY}` } });
    await expectOpenAIError(asClient, 401, "invalid_admin_token");
  });

  it("answers a wrong method with 405 and unknown names with 404", async () => {
    await expectOpenAIError(
      await gateway("/admin/stats", { method: "POST", headers: admin() }),
      405,
      "method_not_allowed",
    );
    await expectOpenAIError(await post("/admin/backends/nope/drain"), 404, "backend_not_found");
    await expectOpenAIError(await post("/admin/pools/nope/reset-affinity"), 404, "model_not_found");
    await expectOpenAIError(await gateway("/admin/dashboard/secrets.txt"), 404, "not_found");
  });

  it("never echoes an unbounded name from the path in a 404 (the dashboard's files need no token)", async () => {
    const long = "a".repeat(9000);
    for (const [res, code] of [
      [await post(`/admin/backends/${long}/drain`), "backend_not_found"],
      [await post(`/admin/pools/${long}/reset-affinity`), "model_not_found"],
      [await gateway(`/admin/dashboard/${long}`), "not_found"],
    ] as const) {
      const msg = await expectOpenAIError(res, 404, code);
      expect(msg.length).toBeLessThan(1000);
      expect(msg).toContain("9000 characters");
    }
  });

  it("drains a backend: no new requests, its stream finishes; the last backend is refused; undrain restores", async () => {
    const env = fleetEnv();
    let res = await post("/admin/backends/adm-b/drain");
    expect(res.status).toBe(200);
    // adm-b is out: a long stream starts on adm-a.
    const stream = await openWithEnv(
      env,
      "/v1/chat/completions",
      spareChat("drain-stream", { stream: true, max_tokens: 64 }),
    );
    expect(stream.res.headers.get("x-prefix-gateway-backend")).toBe("adm-a");
    const reader = stream.res.body!.getReader();
    await reader.read();
    // Swap: adm-b back, adm-a drained while its stream is open.
    expect((await post("/admin/backends/adm-b/undrain")).status).toBe(200);
    res = await post("/admin/backends/adm-a/drain");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      id: "adm-a",
      drained: true,
      pools: { [SPARE_MODEL]: { drained: ["adm-a"] } },
    });
    // The refusal says what to do: which drained backend to put back.
    expect(await expectOpenAIError(await post("/admin/backends/adm-b/drain"), 409, "last_backend")).toMatch(
      /no backend in rotation: undrain one of adm-a first/,
    );
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toContain("data: [DONE]");
    await stream.settled();
    for (let i = 0; i < 6; i++) {
      const r = await gatewayWithEnv(env, "/v1/chat/completions", spareChat(`drained-${i}`));
      expect(r.status).toBe(200);
      expect(r.headers.get("x-prefix-gateway-backend")).toBe("adm-b");
    }
    const list = await gatewayWithEnv(env, "/admin/backends", { headers: admin() });
    const body = (await list.json()) as {
      backends: { id: string; pools: Record<string, { drained: boolean; inflight: number } | null> }[];
    };
    const a = body.backends.find((x) => x.id === "adm-a")!;
    expect(a.pools[SPARE_MODEL]).toMatchObject({ drained: true, inflight: 0 });
    expect(JSON.stringify(body)).not.toContain("http");
    expect((await post("/admin/backends/adm-a/undrain")).status).toBe(200);
    const seen = new Set<string>();
    for (let i = 0; i < 12 && seen.size < 2; i++) {
      const r = await gatewayWithEnv(env, "/v1/chat/completions", spareChat(`undrained-${i}`));
      seen.add(r.headers.get("x-prefix-gateway-backend")!);
    }
    expect(seen).toEqual(new Set(["adm-a", "adm-b"]));
  });

  it("a drain whose RouterDO throws in a later pool is undone in the pools it reached: 503, nothing changed", async () => {
    const [a, b] = spareUrls() as [string, string];
    // adm-x serves two pools, spare-model first; the second pool's RouterDO throws on drain.
    const twoPools = {
      BACKENDS: JSON.stringify([
        backendRow("adm-x", a, [SPARE_MODEL, "adm-throws"]),
        backendRow("adm-y", b, [SPARE_MODEL]),
        backendRow("adm-z", b, ["adm-throws"]),
      ]),
    };
    const ROUTER = interceptRouterMethod("drain", (target) => async (input: DrainInput) => {
      if (input.spec?.model === "adm-throws") throw new Error("Durable Object reset");
      return target.drain(input);
    });
    const res = await gatewayWithEnv({ ...twoPools, ROUTER }, "/admin/backends/adm-x/drain", {
      method: "POST",
      headers: admin(),
    });
    // Before: a 500, with adm-x left drained in spare-model.
    const message = await expectOpenAIError(res, 503, "router_unavailable");
    expect(message).toMatch(/pool 'adm-throws': its RouterDO did not answer \(Durable Object reset\)/);
    expect(message).toMatch(/Nothing was changed \(undone in pool 'spare-model'\)/);
    const list = await gatewayWithEnv(twoPools, "/admin/backends", { headers: admin() });
    const body = (await list.json()) as {
      backends: { id: string; pools: Record<string, { drained: boolean } | null> }[];
    };
    expect(body.backends.find((x) => x.id === "adm-x")!.pools[SPARE_MODEL]).toMatchObject({ drained: false });
  });

  it("resets a pool's affinity index: a prompt it held is new again", async () => {
    const env = fleetEnv();
    const send = () => gatewayWithEnv(env, "/v1/chat/completions", spareChat("reset-me"));
    await send();
    const warm = await send();
    expect(warm.headers.get("x-prefix-gateway-route")).toBe("affinity");
    const res = await post(`/admin/pools/${SPARE_MODEL}/reset-affinity`);
    expect(res.status).toBe(200);
    const cold = await send();
    expect(cold.headers.get("x-prefix-gateway-route")).toBe("ring");
    expect(cold.headers.get("x-prefix-gateway-cached-tokens-expected")).toBe("0");
  });

  it("/admin/stats reports the pool's arms, hits and backends from its RouterDO", async () => {
    const env = fleetEnv();
    for (let i = 0; i < 3; i++)
      await gatewayWithEnv(env, "/v1/chat/completions", spareChat("stats-seed", { stream: true }));
    const res = await gatewayWithEnv(env, "/admin/stats", { headers: admin() });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      policy: string;
      pools: Record<
        string,
        {
          ok: boolean;
          arms: { policy: string; requests: number; ttftMs: { count: number } }[];
          hits: { captured: number; delivered: number };
          backends: { id: string }[];
        }
      >;
    };
    expect(body.policy).toBe("prefix_aware");
    const p = body.pools[SPARE_MODEL]!;
    expect(p.ok).toBe(true);
    expect(p.arms[0]!.policy).toBe("prefix_aware");
    expect(p.arms[0]!.requests).toBeGreaterThanOrEqual(3);
    expect(p.arms[0]!.ttftMs.count).toBeGreaterThanOrEqual(3);
    expect(p.hits.captured).toBeGreaterThan(0);
    expect(p.hits.delivered).toBeGreaterThan(0);
    expect(p.backends.map((b) => b.id).sort()).toEqual(["adm-a", "adm-b"]);
  });

  it("with SHADOW and a split on, each log line says its arm, the shadow's choice and where the hits went", async () => {
    const spy = vi.spyOn(console, "log");
    const env = { ...fleetEnv(), SHADOW: "on", AB_POLICY: "round_robin", AB_PERCENT: "50" };
    const routedLines = () =>
      spy.mock.calls
        .map((args) => String(args[0]))
        .filter((l) => l.startsWith('{"msg":"request"'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        // A decision the Worker made alone (the RouterDO was slow to take the new fleet) has no arm.
        .filter((l) => l.path === "/v1/chat/completions" && l.reason !== "local");
    // Under a loaded test machine more of the first decisions can be the Worker's own: send until
    // five came through the RouterDO (bounded), instead of a fixed eight.
    for (let i = 0; i < 24 && routedLines().length < 5; i++) {
      const r = await gatewayWithEnv(env, "/v1/chat/completions", spareChat("shadow-log", { stream: true }));
      expect(r.status).toBe(200);
    }
    const lines = routedLines();
    expect(lines.length).toBeGreaterThanOrEqual(5);
    for (const l of lines) {
      expect(["a", "b"]).toContain(l.arm);
      expect(["adm-a", "adm-b"]).toContain(l.shadowBackend);
      expect(typeof l.cachedTokensShadow).toBe("number");
      expect(l.cachedTokensAvailable as number).toBeGreaterThanOrEqual(l.cachedTokensExpected as number);
      expect(typeof l.cachedTokensReported).toBe("number");
      expect(typeof l.outputTokens).toBe("number");
    }
    // One conversation, one arm: the same first user message never flips.
    expect(new Set(lines.map((l) => l.arm)).size).toBe(1);
    expect(new Set(lines.map((l) => l.policy)).size).toBe(1);
  });

  it("serves the dashboard page with a strict CSP and no fleet data", async () => {
    const res = await gateway("/admin/dashboard");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    const html = await res.text();
    expect(html).toContain('type="password"');
    expect(html).not.toContain("emu-1");
    for (const f of ["app.js", "uplot.js", "uplot.css", "dashboard.css"]) {
      const r = await gateway(`/admin/dashboard/${f}`);
      expect(r.status, f).toBe(200);
      expect((await r.text()).length, f).toBeGreaterThan(100);
    }
  });
});
