/**
 * A streamed answer's first token reaches whoever decided the attempt (router-client.ts noticeFirstToken): the
 * RouterDO's router through RouterDO.firstToken (its `firstTokens` count and the policy's learned lateness,
 * router.prefillEndOverrunMs), or this isolate's local router when the RouterDO did not answer. A whole JSON
 * answer sends nothing. The call is evidence only: one that throws or never answers neither fails nor holds the
 * client's stream.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { LocalRouter } from "../../src/worker/router/local-router";
import { ROUTER_BACKOFF_MS } from "../../src/worker/router/router-client";
import {
  authHeaders,
  backendRow,
  chatBody,
  DEPLOYED_ROUTER_DEADLINE,
  interceptRoute,
  interceptRouterMethod,
  longPrompt,
  SPARE_MODEL,
  settle,
  spareUrls,
} from "./helpers";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The spare emulators as a pool of this file's own (the counts below are read as differences). */
const model = SPARE_MODEL;
function fleet(): string {
  return JSON.stringify(spareUrls().map((url, i) => backendRow(`ft-${i + 1}`, url, [model])));
}

function request(seed: string, stream: boolean, user = "q"): Request {
  const body = JSON.parse(chatBody(longPrompt(seed), user, stream ? { stream: true } : {})) as Record<
    string,
    unknown
  >;
  return new Request("https://gateway.test/v1/chat/completions", {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ ...body, model }),
  });
}

/** One request, read to its end, and every waitUntil of it (its first-token call, its report) settled. */
async function send(seed: string, stream: boolean, vars: Partial<Env> = {}, user?: string) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(request(seed, stream, user), { ...env, BACKENDS: fleet(), ...vars }, ctx);
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { res, text };
}

async function stats() {
  const s = await env.ROUTER.getByName(model).stats();
  if (!s.ok) throw new Error(s.message);
  return s;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("first token", () => {
  it("a streamed answer's first token reaches the RouterDO's router; a whole JSON answer's does not", async () => {
    expect((await send("ft-warm", false)).res.status).toBe(200);
    await settle(SPARE_MODEL);
    const before = await stats();

    const { res, text } = await send("ft-streamed", true);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-prefix-gateway-route")).not.toBe("local");
    expect(text).toContain("data: [DONE]");
    await settle(SPARE_MODEL);
    const after = await stats();
    expect(after.firstTokens).toBe(before.firstTokens + 1);
    // The policy learned how late that first token came against its predicted prefill end.
    expect(after.router.prefillEndOverrunMs).toBeTypeOf("number");

    expect((await send("ft-json", false)).res.status).toBe(200);
    await settle(SPARE_MODEL);
    expect((await stats()).firstTokens).toBe(before.firstTokens + 1);
  });

  it("costs no RouterDO call when no policy of the pool learns from it (round_robin, no prefix_aware arm or shadow)", async () => {
    const roundRobin = { ROUTING_POLICY: "round_robin" } as Partial<Env>;
    expect((await send("ft-rr-warm", true, roundRobin)).res.status).toBe(200);
    await settle(SPARE_MODEL);
    const before = await stats();
    expect(before.policy).toBe("round_robin");
    const { res, text } = await send("ft-rr", true, roundRobin);
    expect(res.status).toBe(200);
    expect(text).toContain("data: [DONE]");
    await settle(SPARE_MODEL);
    expect((await stats()).firstTokens).toBe(before.firstTokens);
  });

  // Each A/B arm keeps its own ledger of predicted prefill ends, fed by its own placements (pool-router.ts), and
  // PoolRouter.firstToken tells the arm that placed the request, the shadow only when it chose the same backend.
  // Before, any prefix_aware arm or shadow in the pool made every streamed request call, whichever arm placed it.
  it.each([
    ["an A/B split: only the prefix_aware arm's requests", { AB_POLICY: "prefix_aware", AB_PERCENT: "50" }],
    ["the shadow: only where it chose the serving backend", { SHADOW: "on" }],
  ])("round_robin serving, %s make the call", async (_what, vars) => {
    const routed = new Map<string, { policy: string; backendId: string; shadow?: { backendId: string } }>();
    const called: string[] = [];
    const real = env.ROUTER;
    const spy = {
      ...real,
      getByName(name: string, options?: DurableObjectNamespaceGetDurableObjectOptions) {
        const stub = real.getByName(name, options);
        return new Proxy(stub, {
          get(target, prop, receiver) {
            if (prop === "route")
              return async (input: Parameters<typeof target.route>[0]) => {
                const r = await target.route(input);
                if (r.ok) routed.set(r.leaseId, r);
                return r;
              };
            if (prop === "firstToken")
              return (leaseId: string) => {
                called.push(leaseId);
                return target.firstToken(leaseId);
              };
            return Reflect.get(target, prop, receiver);
          },
        });
      },
    } as Env["ROUTER"];
    const split = { ROUTING_POLICY: "round_robin", ...vars, ROUTER: spy } as Partial<Env>;
    for (let i = 0; i < 12; i++) {
      // A conversation of its own each (its first user message: AB_STICKY conversation), so both arms serve.
      const { res, text } = await send(`ft-arms-${i}-${JSON.stringify(vars)}`, true, split, `q ${i}`);
      expect(res.status).toBe(200);
      expect(text).toContain("data: [DONE]");
    }
    await settle(SPARE_MODEL);
    const heard = [...routed].filter(
      ([, r]) => r.policy === "prefix_aware" || r.shadow?.backendId === r.backendId,
    );
    // Both kinds were met: some requests the call is for, some it is not.
    expect(heard.length).toBeGreaterThan(0);
    expect(heard.length).toBeLessThan(routed.size);
    expect(called.sort()).toEqual(heard.map(([lease]) => lease).sort());
  });

  it("a first token for an unknown or already ended lease is ignored", async () => {
    expect((await send("ft-u", true)).res.status).toBe(200);
    await settle(SPARE_MODEL);
    const before = await stats();
    const stub = env.ROUTER.getByName(model);
    expect(await stub.firstToken("no-such-lease")).toEqual({ ok: true, heard: false });
    expect((await stats()).firstTokens).toBe(before.firstTokens);
  });

  it("decided locally (the RouterDO down), the first token reaches this isolate's router", async () => {
    expect((await send("ft-l-warm", false)).res.status).toBe(200);
    await settle(SPARE_MODEL);
    const before = await stats();
    const heard = vi.spyOn(LocalRouter.prototype, "firstToken");
    const down = interceptRoute(async () => {
      throw new Error("Durable Object reset because its code was updated.");
    });
    const vars = { ...DEPLOYED_ROUTER_DEADLINE, ROUTER: down };
    const streamed = await send("ft-l-1", true, vars);
    expect(streamed.res.status).toBe(200);
    expect(streamed.res.headers.get("x-prefix-gateway-route")).toBe("local");
    expect(heard).toHaveBeenCalledTimes(1);
    const whole = await send("ft-l-2", false, vars);
    expect(whole.res.headers.get("x-prefix-gateway-route")).toBe("local");
    expect(heard).toHaveBeenCalledTimes(1);
    // The RouterDO heard nothing of a decision it did not make.
    expect((await stats()).firstTokens).toBe(before.firstTokens);
    // Let this isolate's breaker for the cell close again.
    await sleep(ROUTER_BACKOFF_MS + 50);
  });

  it.each(["throws", "never answers"] as const)(
    "a firstToken call that %s neither fails nor holds the client's stream, and the lease still ends",
    async (failure) => {
      expect((await send(`ft-b-warm-${failure}`, false)).res.status).toBe(200);
      await settle(SPARE_MODEL);
      const before = await stats();
      let release: () => void = () => {};
      const released = new Promise<void>((r) => {
        release = r;
      });
      let calls = 0;
      const router = interceptRouterMethod("firstToken", () => async () => {
        calls++;
        if (failure === "throws") throw new Error("Durable Object is overloaded. Too many requests queued.");
        await released;
        return { ok: true, heard: false };
      });
      const errors = vi.spyOn(console, "error").mockImplementation(() => {});
      const ctx = createExecutionContext();
      const res = await worker.fetch(
        request(`ft-b-${failure}`, true),
        { ...env, BACKENDS: fleet(), ROUTER: router },
        ctx,
      );
      expect(res.status).toBe(200);
      // The whole stream is read while the call is still unanswered (or after it threw).
      const text = await res.text();
      expect(text).toContain("data: [DONE]");
      expect(calls).toBe(1);
      release();
      await waitOnExecutionContext(ctx);
      await settle(SPARE_MODEL);
      const s = await stats();
      expect(s.leases).toBe(0);
      expect(s.usage.completed).toBe(before.usage.completed + 1);
      if (failure === "throws")
        expect(errors.mock.calls.some(([line]) => String(line).includes("first_token_notice_failed"))).toBe(
          true,
        );
    },
  );
});
