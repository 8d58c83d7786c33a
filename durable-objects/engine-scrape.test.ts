/**
 * The RouterDO's scrape schedule and bookkeeping (engine-scrape.ts), with a
 * fake fetch and clock: when rounds are due, that they stop when the pool
 * stops routing, that a round never has more than SCRAPE_CONCURRENCY
 * scrapes in flight, and what a reading records. The bounds of one scrape
 * against real sockets are in test/node/engine-scrape-bounds.test.ts; the
 * object itself in test/worker/engine-scrape.test.ts.
 */
import { describe, expect, it } from "vitest";
import { EngineScraper, SCRAPE_CONCURRENCY, SCRAPE_IDLE_AFTER_MS } from "./engine-scrape";

const metrics = (running: number, waiting: number) =>
  `vllm:num_requests_running{engine="0"} ${running}\nvllm:num_requests_waiting{engine="0"} ${waiting}\nvllm:kv_cache_usage_perc{engine="0"} 0.25\n`;

function fleet(n: number) {
  return Array.from({ length: n }, (_, i) => ({ id: `b${i}`, url: `http://b${i}.test` }));
}

describe("EngineScraper", () => {
  it("off: never due, nothing to schedule", () => {
    const s = new EngineScraper(
      () => Promise.reject(new Error("must not fetch")),
      () => 0,
    );
    s.configure(0, fleet(2));
    s.routed(0);
    expect(s.nextAt()).toBeUndefined();
    expect(s.due(10_000)).toBe(false);
  });

  it("on: due at the first route, then every interval while the pool routes, stopped once it idles", async () => {
    let now = 1000;
    const s = new EngineScraper(
      async () => new Response(metrics(1, 0)),
      () => now,
    );
    s.configure(500, fleet(1));
    expect(s.nextAt()).toBeUndefined(); // nothing routed yet: no round
    s.routed(now);
    expect(s.nextAt()).toBe(1000);
    await s.run(now, () => 0);
    expect(s.nextAt()).toBe(1500);
    // No route call since: rounds go on, each an interval after the last, for SCRAPE_IDLE_AFTER_MS, then stop.
    let rounds = 1;
    for (let at = s.nextAt(); at !== undefined; at = s.nextAt()) {
      now = at;
      await s.run(at, () => 0);
      rounds++;
    }
    expect(now).toBeLessThanOrEqual(1000 + SCRAPE_IDLE_AFTER_MS);
    expect(rounds).toBe(1 + SCRAPE_IDLE_AFTER_MS / 500);
    now += 5000;
    s.routed(now);
    expect(s.nextAt()).toBe(now);
  });

  it("records each backend's reading with when its headers came and our in-flight there then", async () => {
    let now = 0;
    const s = new EngineScraper(
      async (input) => {
        now += 7;
        return new Response(String(input).includes("b0") ? metrics(5, 2) : metrics(1, 0));
      },
      () => now,
    );
    s.configure(1000, fleet(2));
    s.routed(0);
    await s.run(0, (id) => (id === "b0" ? 3 : 0));
    const r0 = s.book.read(0)!;
    expect(r0).toMatchObject({ running: 5, waiting: 2, kvUsage: 0.25, ownInflight: 3 });
    expect(r0.sampledAt).toBeGreaterThan(0);
    expect(s.book.read(1)).toMatchObject({ running: 1, waiting: 0, ownInflight: 0 });
    expect(s.status()).toMatchObject({ intervalMs: 1000, readings: 2, rounds: 1, failures: 0 });
  });

  it("never has more than SCRAPE_CONCURRENCY scrapes in flight, and scrapes every backend", async () => {
    let open = 0;
    let peak = 0;
    const seen = new Set<string>();
    const s = new EngineScraper(async (input) => {
      seen.add(String(input));
      open++;
      peak = Math.max(peak, open);
      await new Promise((r) => setTimeout(r, 5));
      open--;
      return new Response(metrics(0, 0));
    });
    s.configure(1000, fleet(20));
    s.routed(Date.now());
    await s.run(Date.now(), () => 0);
    expect(peak).toBe(SCRAPE_CONCURRENCY);
    expect(seen.size).toBe(20);
  });

  it("sends each backend's apiKey (none when it has none) and never asks to follow a redirect", async () => {
    const sent = new Map<string, { authorization: string | null; redirect: string | undefined }>();
    const s = new EngineScraper(async (input, init) => {
      sent.set(String(input), {
        authorization: new Headers(init?.headers).get("authorization"),
        redirect: init?.redirect,
      });
      return new Response(metrics(0, 0));
    });
    s.configure(1000, [
      { id: "k", url: "http://k.test", apiKey: "the-key" },
      { id: "n", url: "http://n.test" },
    ]);
    s.routed(Date.now());
    await s.run(Date.now(), () => 0);
    expect(Object.fromEntries(sent)).toEqual({
      "http://k.test/metrics": { authorization: "Bearer the-key", redirect: "manual" },
      "http://n.test/metrics": { authorization: null, redirect: "manual" },
    });
  });

  it("a failed scrape records nothing and says why; the previous reading ages out", async () => {
    let now = 0;
    let fail = false;
    const s = new EngineScraper(
      async () => (fail ? new Response("down", { status: 503 }) : new Response(metrics(2, 1))),
      () => now,
    );
    s.configure(1000, fleet(1));
    s.routed(0);
    await s.run(0, () => 0);
    expect(s.book.read(0)).toBeDefined();
    fail = true;
    for (const t of [1000, 2000, 3000, 4000]) {
      now = t;
      s.routed(t);
      await s.run(t, () => 0);
    }
    expect(s.status()).toMatchObject({ failures: 4, failing: { b0: { reason: "HTTP 503", at: 4000 } } });
    // Older than engineSignalMaxAgeMs (three intervals): forgotten, routing goes on without it.
    expect(s.book.read(0)).toBeUndefined();
  });

  it("a backend that moved to a new address loses its reading", async () => {
    const s = new EngineScraper(
      async () => new Response(metrics(2, 1)),
      () => 0,
    );
    s.configure(1000, fleet(1));
    s.routed(0);
    await s.run(0, () => 0);
    expect(s.book.read(0)).toBeDefined();
    s.configure(1000, [{ id: "b0", url: "http://elsewhere.test" }]);
    expect(s.book.read(0)).toBeUndefined();
  });

  it("names no address in a failure's reason", async () => {
    const s = new EngineScraper(
      () => Promise.reject(new Error("connect to http://10.0.0.7:8000/metrics refused")),
      () => 0,
    );
    s.configure(1000, fleet(1));
    s.routed(0);
    await s.run(0, () => 0);
    expect(s.status().failing.b0!.reason).toBe("connect failed: connect to <url> refused");
  });
});
