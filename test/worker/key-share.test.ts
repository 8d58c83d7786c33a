/**
 * Fair shedding between gateway keys when MAX_INFLIGHT_PER_BACKEND binds (src/routing/key-share.ts,
 * KEY_SHARE_HEADROOM_PERCENT): one key that fills every slot must not get every other key a 429 for as long as
 * it keeps them full (bench/results/red-team.md "slow-reader", "key-share"). Two backends at a bound of 2: four
 * slots, a headroom of one (10%, rounded up). Key A is CLIENT_KEY, key B the suite's second key.
 * Against test/worker/metrics-fault-server.ts: /busy (a prompt with "queued" ends after 2.5 s, any other streams
 * for 4 s) and /hungping (a prompt with "stalled" gets a token, then only keep-alive comments: held open; one
 * with "queued" never gets an event).
 */
import { describe, expect, it } from "vitest";
import {
  authHeaders,
  CLIENT_KEY,
  expectOpenAIError,
  faultServerPool,
  interceptRoute,
  openWithEnv,
  poolStats,
  settle,
} from "./helpers";

const KEY_A = CLIENT_KEY;
const KEY_B = "test-client-key-beta";

type Opened = Awaited<ReturnType<typeof openWithEnv>>;

function ask(model: string, key: string, content: string): RequestInit {
  return {
    method: "POST",
    headers: authHeaders({ authorization: `Bearer ${key}` }),
    body: JSON.stringify({ model, stream: true, max_tokens: 8, messages: [{ role: "user", content }] }),
  };
}

/** Opens a stream for `key`; it must be admitted (200). */
async function admitted(env: Partial<Env>, model: string, key: string, content: string): Promise<Opened> {
  const o = await openWithEnv(env, "/v1/chat/completions", ask(model, key, content));
  expect(o.res.status, `${key === KEY_A ? "A" : "B"} "${content}"`).toBe(200);
  return o;
}

/** Asks for `key`; it must be shed: 429 slow_down with a retry-after of whole seconds. Returns the message. */
async function shed(env: Partial<Env>, model: string, key: string, content: string): Promise<string> {
  const o = await openWithEnv(env, "/v1/chat/completions", ask(model, key, content));
  const retryAfter = Number(o.res.headers.get("retry-after"));
  const message = await expectOpenAIError(o.res, 429, "slow_down");
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
  await o.settled();
  return message;
}

/** Reads the first event of each stream, then cancels it (the client leaves). */
async function leave(open: readonly Opened[]): Promise<void> {
  for (const o of open) {
    const r = o.res.body!.getReader();
    await r.read();
    await r.cancel();
  }
  await Promise.all(open.map((o) => o.settled()));
}

describe("fair shedding between keys (KEY_SHARE_HEADROOM_PERCENT)", () => {
  it("B asked lately, then A floods: A stops short of the headroom (429 naming its share), B is admitted at once", async () => {
    const model = "ks-flood";
    const env = { ...faultServerPool(model, "busy", 2), MAX_INFLIGHT_PER_BACKEND: "2" };
    // B asks once and leaves: it is a key contending for this pool for the next minute.
    await leave([await admitted(env, model, KEY_B, "b0")]);
    await settle(model);
    const open = [
      await admitted(env, model, KEY_A, "a1"),
      await admitted(env, model, KEY_A, "a2"),
      await admitted(env, model, KEY_A, "a3"),
    ];
    // One slot is free, and it is B's: A holds 3 of 4, past its share of 2.
    const message = await shed(env, model, KEY_A, "a4");
    expect(message).toContain("this API key already holds 3");
    expect(message).toContain("fair share");
    expect(message).toContain("KEY_SHARE_HEADROOM_PERCENT");
    open.push(await admitted(env, model, KEY_B, "b1"));
    expect((await poolStats(model)).leases).toBe(4);
    await leave(open);
    await settle(model);
    const s = await poolStats(model);
    expect(s.leases).toBe(0);
    // Counted shed, no fault, no failure.
    expect(s.usage.shed).toBe(1);
    expect(s.usage.failed).toBe(0);
    expect(s.backends.every((b) => b.consecutiveFailures === 0)).toBe(true);
  });

  it("A alone takes every slot; B, arriving, is shed (no slot to give), and the slot A frees next goes to B, not to A", async () => {
    const model = "ks-starve";
    const env = { ...faultServerPool(model, "busy", 2), MAX_INFLIGHT_PER_BACKEND: "2" };
    // Work-conserving: no other key asked, so A may hold all four (the first ends after 2.5 s).
    const open = [
      await admitted(env, model, KEY_A, "queued a1"),
      await admitted(env, model, KEY_A, "a2"),
      await admitted(env, model, KEY_A, "a3"),
      await admitted(env, model, KEY_A, "a4"),
    ];
    // Streams are never cut for fairness: B finds no slot, and is told the fleet is at capacity.
    expect(await shed(env, model, KEY_B, "b1")).toContain("at capacity");
    await open[0]!.res.text();
    await open[0]!.settled();
    // One slot is free. A asks first, and is shed: it holds 3, over its share, while B waits.
    expect(await shed(env, model, KEY_A, "a5")).toContain("fair share");
    const b = await admitted(env, model, KEY_B, "b2");
    await leave([b, ...open.slice(1)]);
    await settle(model);
    expect((await poolStats(model)).leases).toBe(0);
  });

  it("the RouterDO out of reach: the isolate's own decisions apply the same share (A shed naming it, B admitted)", async () => {
    const model = "ks-local";
    // Every route call fails (a platform reset): each decision is this isolate's (local-router.ts).
    const down = interceptRoute(async () => {
      throw new Error("Durable Object reset because its code was updated.");
    });
    const env = { ...faultServerPool(model, "busy", 2), MAX_INFLIGHT_PER_BACKEND: "2", ROUTER: down };
    await leave([await admitted(env, model, KEY_B, "b0")]);
    const open = [
      await admitted(env, model, KEY_A, "a1"),
      await admitted(env, model, KEY_A, "a2"),
      await admitted(env, model, KEY_A, "a3"),
    ];
    const message = await shed(env, model, KEY_A, "a4");
    expect(message).toContain("this API key already holds 3");
    expect(message).toContain("fair share");
    open.push(await admitted(env, model, KEY_B, "b1"));
    await leave(open);
  });

  it("guard: KEY_SHARE_HEADROOM_PERCENT 0 is the first-come behaviour: A takes the slot B would get", async () => {
    const model = "ks-off";
    const env = {
      ...faultServerPool(model, "busy", 2),
      MAX_INFLIGHT_PER_BACKEND: "2",
      KEY_SHARE_HEADROOM_PERCENT: "0",
    };
    await leave([await admitted(env, model, KEY_B, "b0")]);
    const open = [];
    for (const c of ["a1", "a2", "a3", "a4"]) open.push(await admitted(env, model, KEY_A, c));
    expect(await shed(env, model, KEY_B, "b1")).toContain("at capacity");
    await leave(open);
    await settle(model);
  });

  // A key's count of slots is released with each of its leases, however the lease ends: were A's two ended
  // leases still counted, A would be at its share (2 of 4) when B holds 3, and shed from the last slot; with
  // nothing counted it is below its share, and admitted.
  const endings: [string, (env: Partial<Env>, model: string) => Promise<void>][] = [
    [
      "the client leaves mid-stream",
      async (env, model) =>
        leave([
          await admitted(env, model, KEY_A, "stalled a1"),
          await admitted(env, model, KEY_A, "stalled a2"),
        ]),
    ],
    [
      "the backend never sends a first event, the retry elsewhere neither (backend faults, a retry, a 504)",
      async (env, model) => {
        const both = await Promise.all(
          ["queued a1", "queued a2"].map((c) =>
            openWithEnv(env, "/v1/chat/completions", ask(model, KEY_A, c)),
          ),
        );
        for (const o of both) {
          await expectOpenAIError(o.res, 504, "backend_timeout");
          await o.settled();
        }
      },
    ],
  ];
  for (const [i, [how, end]] of endings.entries())
    it(`A's slots are given back when its leases end: ${how}`, async () => {
      const model = `ks-release-${i}`;
      const env = {
        ...faultServerPool(model, "hungping", 2),
        MAX_INFLIGHT_PER_BACKEND: "2",
        UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "600",
      };
      await end(env, model);
      await settle(model);
      const before = await poolStats(model);
      expect(before.leases).toBe(0);
      if (i === 1) expect(before.usage.retried).toBeGreaterThanOrEqual(1);
      const open = [
        await admitted(env, model, KEY_B, "stalled b1"),
        await admitted(env, model, KEY_B, "stalled b2"),
        await admitted(env, model, KEY_B, "stalled b3"),
      ];
      open.push(await admitted(env, model, KEY_A, "stalled a3"));
      await leave(open);
      await settle(model);
    }, 20_000);
});
