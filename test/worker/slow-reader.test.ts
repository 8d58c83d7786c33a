/**
 * A client that holds its streams open and reads nothing (backpressure, not a close) must not hold its backends'
 * in-flight slots until the lease's TTL: with MAX_INFLIGHT_PER_BACKEND set, one key's unread streams filled every
 * backend's bound and another key got 429 slow_down for as long as they were held (red-team.md, tenth pass,
 * Noticed 1). The relay's write-stall bound (CLIENT_STALL_TIMEOUT_MS) cuts such a stream: the backend's request is
 * ended, the lease released as the client's doing (no fault against the backend), and the other key is served.
 *
 * The backends are the fake backend's /flood (a token's event every 20 ms, without end): there is always more to
 * relay, so a stalled relay is the client's doing alone. The streams are driven through the Worker's fetch with
 * their bodies held unread (openWithEnv): nothing between the relay and the test reads ahead.
 */
import { describe, expect, it } from "vitest";
import {
  authHeaders,
  CLIENT_KEY,
  expectOpenAIError,
  faultServerPool,
  openWithEnv,
  poolStats,
  settle,
} from "./helpers";

const MODEL = "slow-reader";
const OTHER_KEY = "test-client-key-beta";
const STALL_MS = 800;
/**
 * How long after the stall bound the other key must be served. Not a speed assertion: without the bound the
 * slots are held LEASE_TTL_SECONDS (600 s), so any bound of seconds tells the two apart.
 */
const FREED_WITHIN_MS = 8000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const bindings = {
  ...faultServerPool(MODEL, "flood", 2),
  MAX_INFLIGHT_PER_BACKEND: "2",
  CLIENT_STALL_TIMEOUT_MS: String(STALL_MS),
};

function ask(key: string, tag: string): RequestInit {
  return {
    method: "POST",
    headers: authHeaders({ authorization: `Bearer ${key}` }),
    body: JSON.stringify({
      model: MODEL,
      stream: true,
      messages: [{ role: "user", content: `${tag} ${"words to route on ".repeat(40)}` }],
    }),
  };
}

describe("a client that stops reading (CLIENT_STALL_TIMEOUT_MS)", () => {
  it("one key's unread streams filling every backend's bound are cut, and another key is served", async () => {
    // Four streams fill two backends at two each; each is read once (its headers and first event came), then held.
    const held: ReadableStreamDefaultReader<Uint8Array>[] = [];
    const settled: (() => Promise<void>)[] = [];
    for (let i = 0; i < 4; i++) {
      const o = await openWithEnv(bindings, "/v1/chat/completions", ask(CLIENT_KEY, `unread-${i}`));
      expect(o.res.status).toBe(200);
      const reader = o.res.body!.getReader();
      expect((await reader.read()).done).toBe(false);
      held.push(reader);
      settled.push(o.settled);
    }
    const filledAt = Date.now();
    try {
      expect((await poolStats(MODEL)).leases).toBe(4);
      // While they are held, the other key is shed: the bound is the pool's, not the key's.
      const shed = await openWithEnv(bindings, "/v1/chat/completions", ask(OTHER_KEY, "other-0"));
      await expectOpenAIError(shed.res, 429, "slow_down");
      await shed.settled();

      // Then the other key asks again until it is served.
      let servedAfter: number | undefined;
      for (let i = 1; Date.now() - filledAt < STALL_MS + FREED_WITHIN_MS; i++) {
        await sleep(200);
        const o = await openWithEnv(bindings, "/v1/chat/completions", ask(OTHER_KEY, `other-${i}`));
        if (o.res.status === 200) {
          servedAfter = Date.now() - filledAt;
          const r = o.res.body!.getReader();
          expect((await r.read()).done).toBe(false);
          await r.cancel();
          await o.settled();
          break;
        }
        await expectOpenAIError(o.res, 429, "slow_down");
        await o.settled();
      }
      const leases = (await poolStats(MODEL)).leases;
      console.log(`slow-reader: other key served after ${servedAfter ?? "never"} ms; leases held ${leases}`);
      expect(servedAfter).toBeDefined();
      expect(servedAfter!).toBeGreaterThanOrEqual(STALL_MS - 100);
    } finally {
      for (const r of held) await r.cancel().catch(() => {});
      for (const s of settled) await s();
    }
    await settle(MODEL);
    // The unread streams were the clients' doing: no fault against either backend, none counted failed.
    const s = await poolStats(MODEL);
    for (const b of s.backends) expect(b.consecutiveFailures).toBe(0);
    expect(s.usage.failed).toBe(0);
  }, 30_000);
});
