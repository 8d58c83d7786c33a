/**
 * The fleet changes while a stream is open (an operator's `wrangler secret put
 * BACKENDS` under traffic; deployed, the next request carries the new secret
 * while streams already relayed keep going). The open stream must finish
 * whole, new requests must follow the new fleet, and afterwards the pool's
 * in-flight counts must be back to 0 with no completion counted twice.
 * Found by the ops pass (bench/results/ops-pass.md): under `wrangler dev` a
 * changed vars file needs a restart, which cuts open streams, so this is where
 * the deployed behaviour can be checked.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  authHeaders,
  BACKEND_KEY,
  chatBody,
  gatewayWithEnv,
  longPrompt,
  openWithEnv,
  SPARE_MODEL,
  settle,
  spareUrls,
} from "./helpers";

function fleet(...backends: { id: string; url: string; weight?: number }[]): string {
  return JSON.stringify(
    backends.map((b) => ({
      weight: 1,
      ...b,
      models: [SPARE_MODEL],
      apiKey: BACKEND_KEY,
      kvCacheTokens: 262144,
    })),
  );
}

function spareChat(seed: string, extra: Record<string, unknown> = {}): RequestInit {
  const body = JSON.parse(chatBody(longPrompt(seed), "q", extra)) as Record<string, unknown>;
  return { method: "POST", headers: authHeaders(), body: JSON.stringify({ ...body, model: SPARE_MODEL }) };
}

async function stats() {
  const s = await env.ROUTER.getByName(SPARE_MODEL).stats();
  if (!s.ok) throw new Error(s.message);
  return s;
}

/** Opens a long stream on the fleet and reads its first chunk; returns it with the backend it went to. */
async function openStream(backends: string, seed: string) {
  const open = await openWithEnv(
    { BACKENDS: backends },
    "/v1/chat/completions",
    spareChat(seed, { stream: true, max_tokens: 400 }),
  );
  expect(open.res.status).toBe(200);
  const reader = open.res.body!.getReader();
  const first = await reader.read();
  expect(first.done).toBe(false);
  const dec = new TextDecoder();
  const rest = async () => {
    let text = dec.decode(first.value, { stream: true });
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += dec.decode(value, { stream: true });
    }
    await open.settled();
    return text;
  };
  return { backend: open.res.headers.get("x-prefix-gateway-backend")!, rest };
}

describe("the fleet changes while a stream is open", () => {
  it("a removed backend's open stream finishes whole; new requests avoid it; in flight returns to 0", async () => {
    const [a, b] = spareUrls() as [string, string];
    const both = fleet({ id: "fc-a", url: a }, { id: "fc-b", url: b });
    const held = await openStream(both, "fc-remove");
    const before = await stats();
    const gone = held.backend;
    const stay = gone === "fc-a" ? { id: "fc-a", url: a } : { id: "fc-b", url: b };
    expect((await stats()).backends.find((x) => x.id === gone)!.inflight).toBe(1);

    const without = fleet(stay);
    for (let i = 0; i < 4; i++) {
      const res = await gatewayWithEnv(
        { BACKENDS: without },
        "/v1/chat/completions",
        spareChat(`fc-after-${i}`),
      );
      expect(res.status).toBe(200);
      expect(res.headers.get("x-prefix-gateway-backend")).toBe(stay.id);
    }
    const text = await held.rest();
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(text).not.toContain('"error"');
    await settle(SPARE_MODEL);
    const s = await stats();
    expect(s.backends.map((x) => [x.id, x.inflight])).toEqual([[stay.id, 0]]);
    expect(s.router.totalInflight).toBe(0);
    expect(s.leases).toBe(0);
    // Five requests (the held stream and four after the change), each completed once, none failed.
    expect(s.usage.completed - before.usage.completed).toBe(5);
    expect(s.usage.failed - before.usage.failed).toBe(0);
  });

  it("a weight change keeps the open stream counted once and ends it once", async () => {
    const [a, b] = spareUrls() as [string, string];
    const v1 = fleet({ id: "fw-a", url: a }, { id: "fw-b", url: b });
    const held = await openStream(v1, "fw-weight");
    const before = await stats();
    const v2 = fleet({ id: "fw-a", url: a, weight: 3 }, { id: "fw-b", url: b });
    const res = await gatewayWithEnv({ BACKENDS: v2 }, "/v1/chat/completions", spareChat("fw-after"));
    expect(res.status).toBe(200);
    await settle(SPARE_MODEL, 200).catch(() => {}); // the held stream's lease stays: only wait for the other
    const mid = await stats();
    expect(mid.fleetVersion).not.toBe(before.fleetVersion);
    // The held stream still counts on its backend across the change (not dropped, not doubled).
    expect(mid.backends.find((x) => x.id === held.backend)!.inflight).toBe(1);
    expect(mid.leases).toBe(1);
    const text = await held.rest();
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    await settle(SPARE_MODEL);
    const s = await stats();
    expect(s.router.totalInflight).toBe(0);
    expect(s.backends.every((x) => x.inflight === 0)).toBe(true);
    // The held stream and the request after the change, each completed once.
    expect(s.usage.completed - before.usage.completed).toBe(2);
  });

  it("a backend id moved to a new URL: the open stream on the old one finishes, new requests go to the new one", async () => {
    const [a, b] = spareUrls() as [string, string];
    // fu-x alone at a; then fu-x at b (the old address's stream still open), fu-y at a.
    const v1 = fleet({ id: "fu-x", url: a });
    const held = await openStream(v1, "fu-move");
    expect(held.backend).toBe("fu-x");
    const v2 = fleet({ id: "fu-x", url: b });
    const servedAtB = async () => {
      const s = await fetch(`${b}/_control/fault`).then(
        (r) => r.json() as Promise<{ stats: { requests: number } }>,
      );
      return s.stats.requests;
    };
    const atBBefore = await servedAtB();
    for (let i = 0; i < 3; i++) {
      const res = await gatewayWithEnv({ BACKENDS: v2 }, "/v1/chat/completions", spareChat(`fu-after-${i}`));
      expect(res.status).toBe(200);
      expect(res.headers.get("x-prefix-gateway-backend")).toBe("fu-x");
    }
    expect((await servedAtB()) - atBBefore).toBe(3);
    const text = await held.rest();
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(text).not.toContain('"error"');
    await settle(SPARE_MODEL);
    const s = await stats();
    expect(s.backends.map((x) => [x.id, x.inflight, x.consecutiveFailures])).toEqual([["fu-x", 0, 0]]);
    expect(s.router.totalInflight).toBe(0);
  });
});
