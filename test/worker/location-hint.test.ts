/**
 * ROUTER_LOCATION_HINT reaches every `get` that may create one of the gateway's Durable Objects: the
 * pool's RouterDO (inference, /healthz, the admin API) and the key's KeyLimiterDO; unset, no hint is sent.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, authHeaders, chatBody, gatewayWithEnv, longPrompt } from "./helpers";

type GetOptions = DurableObjectNamespaceGetDurableObjectOptions | undefined;

/** The real namespace, recording the options of every getByName. */
function recording<N extends Env["ROUTER"] | Env["KEY_LIMITER"]>(real: N): { ns: N; seen: GetOptions[] } {
  const seen: GetOptions[] = [];
  const ns = {
    ...real,
    getByName(name: string, options?: GetOptions) {
      seen.push(options);
      return real.getByName(name, options);
    },
  } as N;
  return { ns, seen };
}

const chatInit = (seed: string): RequestInit => ({
  method: "POST",
  headers: authHeaders(),
  body: chatBody(longPrompt(seed, 20), "hi"),
});

describe("ROUTER_LOCATION_HINT", () => {
  it("is passed on the RouterDO's and the KeyLimiterDO's get", async () => {
    const router = recording(env.ROUTER);
    const limiter = recording(env.KEY_LIMITER);
    const res = await gatewayWithEnv(
      { ROUTER: router.ns, KEY_LIMITER: limiter.ns, ROUTER_LOCATION_HINT: "weur", KEY_MAX_CONCURRENT: "4" },
      "/v1/chat/completions",
      chatInit("hint-weur"),
    );
    expect(res.status).toBe(200);
    expect(router.seen.length).toBeGreaterThan(0);
    for (const o of router.seen) expect(o).toEqual({ locationHint: "weur" });
    expect(limiter.seen).toEqual([{ locationHint: "weur" }]);
  });

  it("is passed by /healthz and the admin API, which may be the first to reach a pool", async () => {
    const router = recording(env.ROUTER);
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const overrides = { ROUTER: router.ns, ROUTER_LOCATION_HINT: "apac-se" };
    expect((await gatewayWithEnv(overrides, "/healthz", { headers: admin })).status).toBe(200);
    expect((await gatewayWithEnv(overrides, "/admin/stats", { headers: admin })).status).toBe(200);
    expect(router.seen.length).toBeGreaterThan(1);
    for (const o of router.seen) expect(o).toEqual({ locationHint: "apac-se" });
  });

  it("sends no hint when it is empty (the default)", async () => {
    const router = recording(env.ROUTER);
    const limiter = recording(env.KEY_LIMITER);
    const res = await gatewayWithEnv(
      { ROUTER: router.ns, KEY_LIMITER: limiter.ns, ROUTER_LOCATION_HINT: "", KEY_MAX_CONCURRENT: "4" },
      "/v1/chat/completions",
      chatInit("hint-none"),
    );
    expect(res.status).toBe(200);
    expect(router.seen.length).toBeGreaterThan(0);
    for (const o of router.seen) expect(o).toBeUndefined();
    expect(limiter.seen).toEqual([undefined]);
  });

  it("refuses a misspelt hint with a config error naming the var", async () => {
    const res = await gatewayWithEnv(
      { ROUTER_LOCATION_HINT: "us-east" },
      "/v1/chat/completions",
      chatInit("x"),
    );
    expect(res.status).toBe(503);
    // The public answer names the var; the reason is the admin's (config-invalid.ts).
    expect(await res.text()).toContain("(ROUTER_LOCATION_HINT)");
    const admin = { authorization: `Bearer ${env.ADMIN_TOKEN}` };
    const hz = await gatewayWithEnv({ ROUTER_LOCATION_HINT: "us-east" }, "/healthz", { headers: admin });
    expect(JSON.stringify(await hz.json())).toContain(
      "ROUTER_LOCATION_HINT: must be empty (no hint) or one of wnam",
    );
  });
});
