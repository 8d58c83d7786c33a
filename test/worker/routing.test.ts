/**
 * Routing through the real Worker and RouterDO against real HTTP backends:
 * stickiness, spreading, bounded-load spill, tenant isolation, usage feedback.
 */
import { describe, expect, it } from "vitest";
import { chat, chatAndSettle, chatBody, longPrompt, MODEL, poolStats, settle } from "./helpers";

const backendOf = (res: Response) => res.headers.get("x-prefix-gateway-backend");
const reasonOf = (res: Response) => res.headers.get("x-prefix-gateway-route");

describe("prefix-aware routing", () => {
  it("sends requests sharing a prefix to one backend, and says why", async () => {
    const system = longPrompt("sticky");
    const first = await chatAndSettle(chatBody(system, "question 0"));
    expect(reasonOf(first)).toBe("ring");
    expect(first.headers.get("x-prefix-gateway-cached-tokens-expected")).toBe("0");
    for (let i = 1; i < 5; i++) {
      const res = await chatAndSettle(chatBody(system, `question ${i}`));
      expect(backendOf(res)).toBe(backendOf(first));
      expect(reasonOf(res)).toBe("affinity");
      expect(Number(res.headers.get("x-prefix-gateway-cached-tokens-expected"))).toBeGreaterThan(300);
      expect(res.headers.get("x-request-id")).toBeTruthy();
    }
  });

  it("spreads different prefixes over the fleet", async () => {
    const used = new Set<string | null>();
    for (let i = 0; i < 12; i++) {
      const res = await chat(chatBody(longPrompt(`spread-${i}`), "q"));
      used.add(backendOf(res));
      await res.arrayBuffer();
      await settle();
    }
    expect(used.size).toBeGreaterThanOrEqual(3);
  });

  it("gives prompts shorter than one block a key of their own: different ones spread, a repeat returns", async () => {
    // No system prompt, a few words: fewer than 16 tokens, so no block key. Sequential, on an idle fleet.
    const short = (i: number) =>
      JSON.stringify({ model: MODEL, max_tokens: 4, messages: [{ role: "user", content: `short ${i}?` }] });
    const homeOf: (string | null)[] = [];
    for (let i = 0; i < 40; i++) homeOf.push(backendOf(await chatAndSettle(short(i))));
    const counts = new Map<string | null, number>();
    for (const b of homeOf) counts.set(b, (counts.get(b) ?? 0) + 1);
    expect(counts.size).toBe(4);
    for (const n of counts.values()) expect(n).toBeLessThanOrEqual(20);
    for (const i of [0, 13, 27, 39]) expect(backendOf(await chatAndSettle(short(i)))).toBe(homeOf[i]);
  });

  it("spills the next request when the prefix's backend is at its load bound", async () => {
    const system = longPrompt("hot");
    // Hold a stream open on the prefix's home that books 120,000 tokens of output. prefix_aware bounds
    // work (src/routing/work-bound.ts): with 4 equal backends of 262,144 KV tokens, c = 1.25 and a
    // slack of 1/4, home may hold 1.25/4 · (W + x) + 65,536 tokens, about 103,000 here: home is full.
    const held = await chat(chatBody(system, "long answer", { stream: true, max_tokens: 120_000 }));
    const home = backendOf(held);
    expect(reasonOf(held)).toBe("ring");
    expect((await poolStats()).backends.find((b) => b.id === home)?.inflight).toBe(1);
    const next = await chat(chatBody(system, "while busy"));
    const spilled = backendOf(next);
    expect(spilled).not.toBe(home);
    expect(reasonOf(next)).toBe("spill");
    await next.arrayBuffer();
    // The client walks away from the held stream: the upstream is aborted and the lease released.
    await held.body?.cancel();
    await settle();
    const after = await poolStats();
    expect(after.leases).toBe(0);
    expect(after.backends.every((b) => b.inflight === 0)).toBe(true);
    // Both now hold the prefix; the next request goes back to one of them on affinity.
    const calm = await chatAndSettle(chatBody(system, "calm again"));
    expect(reasonOf(calm)).toBe("affinity");
    expect([home, spilled]).toContain(backendOf(calm));
  });

  it("keeps tenants apart: a different prompt_cache_key or x-prefix-cache-key shares no affinity", async () => {
    const system = longPrompt("tenant");
    await chatAndSettle(chatBody(system, "a1", { prompt_cache_key: "alice" }));
    const alice = await chatAndSettle(chatBody(system, "a2", { prompt_cache_key: "alice" }));
    expect(reasonOf(alice)).toBe("affinity");
    const bob = await chatAndSettle(chatBody(system, "b1", { prompt_cache_key: "bob" }));
    expect(reasonOf(bob)).toBe("ring");
    expect(bob.headers.get("x-prefix-gateway-cached-tokens-expected")).toBe("0");
    const viaHeader = await chatAndSettle(chatBody(system, "c1"), { "x-prefix-cache-key": "carol" });
    expect(reasonOf(viaHeader)).toBe("ring");
    const carolAgain = await chatAndSettle(chatBody(system, "c2"), { "x-prefix-cache-key": "carol" });
    expect(reasonOf(carolAgain)).toBe("affinity");
    expect(backendOf(carolAgain)).toBe(backendOf(viaHeader));
  });

  it("feeds the backend's usage (cached_tokens) back to the RouterDO", async () => {
    const before = (await poolStats()).usage;
    const system = longPrompt("usage");
    await chatAndSettle(chatBody(system, "one"));
    await chatAndSettle(chatBody(system, "two")); // non-streamed: usage from the JSON body
    await chatAndSettle(chatBody(system, "three", { stream: true })); // streamed, usage not asked for
    const after = (await poolStats()).usage;
    expect(after.withUsage - before.withUsage).toBe(3);
    expect(after.completed - before.completed).toBe(3);
    // The second and third requests found the shared system prompt in the backend's cache.
    expect(after.cachedTokens - before.cachedTokens).toBeGreaterThan(100);
  });

  it("passes usage.completion_tokens through to the RouterDO's routing core, streamed or not", async () => {
    const before = (await poolStats()).usage;
    const system = longPrompt("answers");
    const plain = await chat(chatBody(system, "one", { max_tokens: 9 }));
    expect(plain.status).toBe(200);
    const plainUsage = ((await plain.json()) as { usage: { completion_tokens: number } }).usage;
    const streamed = await chat(
      chatBody(system, "two", { max_tokens: 7, stream: true, stream_options: { include_usage: true } }),
    );
    expect(streamed.status).toBe(200);
    const events = (await streamed.text())
      .split("\n")
      .filter((l) => l.startsWith("data: {"))
      .map((l) => JSON.parse(l.slice(6)) as { usage?: { completion_tokens: number } });
    const streamedUsage = events.find((e) => e.usage !== undefined)?.usage;
    expect(streamedUsage).toBeDefined();
    await settle();
    const after = (await poolStats()).usage;
    expect(plainUsage.completion_tokens).toBeGreaterThan(0);
    expect(after.outputTokens - before.outputTokens).toBe(
      plainUsage.completion_tokens + streamedUsage!.completion_tokens,
    );
  });
});
